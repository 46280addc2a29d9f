import type { Api, AssistantMessage, Model, Provider, Usage } from "./types.js";

/** A usage record with every count and cost at zero. */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** Fills `usage.cost` from the model's prices (US dollars per million tokens) and returns it. */
export function calculateCost(model: Pick<Model, "cost">, usage: Usage): Usage["cost"] {
  const c = usage.cost;
  c.input = (model.cost.input / 1_000_000) * usage.input;
  c.output = (model.cost.output / 1_000_000) * usage.output;
  c.cacheRead = (model.cost.cacheRead / 1_000_000) * usage.cacheRead;
  c.cacheWrite = (model.cost.cacheWrite / 1_000_000) * usage.cacheWrite;
  c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
  return c;
}

/** An empty assistant message for `model`, the starting point of every provider's partial. */
/** A cost as people read it: `$2.00`; amounts under a cent keep four decimals (`$0.0042`). */
export function formatUsd(usd: number): string {
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function createAssistantMessage(model: {
  api: Api;
  provider: Provider;
  id: string;
}): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}
