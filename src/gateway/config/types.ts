/**
 * The resolved config and the slice each module receives. Resolution (see `resolve.ts`) has already
 * substituted `${ENV}` references, read `…File` secrets into their fields, filled defaults, decided
 * each channel's `enabled`, and made every path absolute. Modules take only their slice
 * (`new TelegramAdapter(cfg.channels.telegram)`, `createHttpServer({ config: cfg.http })`), never
 * the whole object.
 */
import type { Static } from "@sinclair/typebox";
import type { CHANNELS } from "../../adapters/registry.js";
import type { BudgetsSchema } from "./budgets-schema.js";
import type { SchedulesSchema } from "./schedules-schema.js";
import type {
  AgentSchema,
  ApprovalSchema,
  ChannelSchemas,
  CustomModelSchema,
  ExtensionsSchema,
  HttpSchema,
  LoggingSchema,
  ModelsSchema,
  RuntimeSchema,
  ToolsSchema,
} from "./schema.js";

type Decided<T> = Omit<T, "enabled"> & {
  /** Decided at load: explicit value, else on when the channel's tokens are set (web: when no platform is on). */
  enabled: boolean;
};

/** Each built-in channel's resolved slice, from its definition in `src/adapters/<platform>/channel.ts`. */
type BuiltInSlices = { [P in keyof typeof CHANNELS]: Decided<Static<ChannelSchemas<typeof CHANNELS>[P]>> };

/**
 * Slack. `botToken`, `appToken` and `signingSecret` hold the secret values themselves (from the
 * environment or the `…File`). When `enabled`, `botToken` is set, plus `appToken` in socket mode or
 * `signingSecret` in http mode.
 */
export type SlackChannelConfig = BuiltInSlices["slack"];

/** Fields every channel has (access rules, delivery while busy, rendering). */
export type ChannelCommonConfig = Pick<
  SlackChannelConfig,
  | "enabled"
  | "admins"
  | "allowedUsers"
  | "allowedChannels"
  | "requireMention"
  | "dmPolicy"
  | "deliveryMode"
  | "collectWindowMs"
  | "inboxCap"
  | "tools"
  | "settings"
  | "bashApproval"
  | "ackReaction"
  | "historyLimit"
  | "editIntervalMs"
  | "files"
>;

/** Every channel's slice by platform (a registry with more channels has more slices at run time). */
export type ChannelsConfig = BuiltInSlices;

/** One custom model entry, shaped close to `Model` in `src/agent/llm/types.ts` plus its `provider`. */
export type CustomModelConfig = Static<typeof CustomModelSchema>;
/** Default model (`provider/id`), default thinking level, custom models. */
export type ModelsConfig = Static<typeof ModelsSchema>;
/** The agent: `systemPrompt` (already read from `systemPromptFile` if given) and an absolute `workspaceDir`. */
export type AgentConfig = Static<typeof AgentSchema>;
/** Redis (absent `redisUrl`: embedded runtime), key prefix, concurrency, timeouts, absolute `dataDir`. */
export type RuntimeConfig = Static<typeof RuntimeSchema>;
/** Approval rules: bash command patterns (valid regular expressions), timeout, tools always needing approval. */
export type ApprovalConfig = Static<typeof ApprovalSchema>;
/** The built-in tools: `sandbox` (mode, network, env names, read-only paths, limits). */
export type ToolsConfig = Static<typeof ToolsSchema>;
/** Extension modules; relative paths made absolute, package names left as they are. */
export type ExtensionsConfig = Static<typeof ExtensionsSchema>;
/** HTTP bind address and port; `token` is set whenever `host` is not loopback. */
export type HttpConfig = Static<typeof HttpSchema>;
/** Log level. */
export type LoggingConfig = Static<typeof LoggingSchema>;

export type SchedulesConfig = Static<typeof SchedulesSchema>;
/**
 * Budgets: whether model calls are recorded, the zone of days and months (canonical IANA name),
 * the warning fraction, the reservation lease, the approval wait, each scope's day and month limits
 * and single members' limits (docs/budgets.md).
 */
export type BudgetsConfig = Static<typeof BudgetsSchema>;

/** The whole resolved config. Only the wiring code holds it; modules get slices. */
export interface SwitchboardConfig {
  channels: ChannelsConfig;
  models: ModelsConfig;
  agent: AgentConfig;
  runtime: RuntimeConfig;
  approval: ApprovalConfig;
  tools: ToolsConfig;
  extensions: ExtensionsConfig;
  http: HttpConfig;
  logging: LoggingConfig;
  schedules: SchedulesConfig;
  budgets: BudgetsConfig;
  /**
   * The variables the config reads credentials and headers from, each with the field it feeds
   * (set by the loader). Their values are masked everywhere (`collectSecretValues`) and tool
   * processes never get them.
   */
  credentialVariables?: Readonly<Record<string, string>>;
}
