/**
 * `switchboard check`'s model probes: each configured model (the one new threads use, and every
 * entry of `models.custom`) gets a one-token request, and check says what came back: the first
 * words of the answer and how long it took, or the provider's error as the chat would show it
 * (status, content type and first bytes of a page that is no event stream, a refused key, a model
 * id the server does not know). A refused key or an unknown model id is a config error (exit 2),
 * like a platform that refuses its token; anything else is "unreachable" (exit 1).
 */
import { hasCredentials } from "../../agent/llm/models.js";
import { complete } from "../../agent/llm/stream.js";
import type { Model } from "../../agent/llm/types.js";
import type { CheckProbe, CheckResult } from "../cli/types.js";
import type { ModelsConfig } from "../config/types.js";
import { chooseDefaultModel, modelRefOf } from "./models.js";

/** How long a model may take to answer (a local server may first load the model). */
const MODEL_PROBE_TIMEOUT_MS = 20_000;

/** Longest part of an answer quoted. */
const QUOTED_CHARS = 40;

/**
 * The probes of the models `config` names that can be called here: the default (or the model new
 * threads get) and the custom ones, each once. A model without credentials is left out when the
 * deployment chose it by default (check warns about it already), and checked when it is configured.
 */
export function modelProbes(config: ModelsConfig, find: (ref: string) => Model | undefined): CheckProbe[] {
  const models = new Map<string, Model>();
  const chosen = chooseDefaultModel(config);
  if (chosen && hasCredentials(chosen)) models.set(modelRefOf(chosen), chosen);
  for (const c of config.custom) {
    const model = find(`${c.provider}/${c.id}`);
    if (model) models.set(modelRefOf(model), model);
  }
  return [...models].map(([ref, model]) => ({
    name: `model ${ref}`,
    timeoutMs: MODEL_PROBE_TIMEOUT_MS,
    check: (signal) => askModel(model, signal),
  }));
}

async function askModel(model: Model, signal: AbortSignal | undefined): Promise<CheckResult> {
  const started = Date.now();
  const reply = await complete(
    model,
    { messages: [{ role: "user", content: "Reply with the word OK.", timestamp: started }] },
    { maxTokens: 1, maxRetries: 0, idleTimeoutMs: MODEL_PROBE_TIMEOUT_MS, ...(signal ? { signal } : {}) },
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (reply.stopReason === "error" || reply.stopReason === "aborted") {
    const detail = reply.errorMessage ?? "the request failed";
    // A key the server refuses, no key at all, or a model id it does not know: fix the config.
    const refused = /\bHTTP (401|403|404)\b|^No API key/.test(detail);
    return { ok: false, detail, ...(refused ? { refused: true } : {}) };
  }
  const text = reply.content
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("")
    .replace(/\s+/g, " ")
    .trim();
  const said = text
    ? `"${text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text}"`
    : "no text";
  const tokens =
    reply.usage.output > 0
      ? `, ${reply.usage.output} output ${reply.usage.output === 1 ? "token" : "tokens"}`
      : "";
  return { ok: true, detail: `answered ${said} in ${seconds} s (${reply.stopReason}${tokens})` };
}
