/**
 * The config file's schema, in TypeBox: one source for validation (AJV at start), for the
 * generated JSON Schema editors use (`config/switchboard.schema.json`) and for the TypeScript
 * types of each module's slice.
 *
 * Convention: a property with a `default` is declared required here, so its static type is
 * non-optional; AJV (`useDefaults`) fills it before the `required` check, and the editor schema
 * drops it from `required` (see `json-schema.ts`). Properties whose absence means something
 * (`runtime.redisUrl` absent = embedded runtime, `channels.*.enabled` absent = decide from the
 * tokens) are `Type.Optional` without a default.
 *
 * Secrets (`botToken`, `signingSecret`, `http.token`, …) never appear literally in the file: they
 * are `${ENV_VAR}` references or `…File` paths, checked by name in `secrets.ts`.
 */
import { type Static, type TObject, type TProperties, Type } from "@sinclair/typebox";
import type { ChannelDefinition } from "../../adapters/channel.js";
import { Obj, SecretFile, StringEnum, StringList } from "../../adapters/config-schema.js";
import { CHANNELS } from "../../adapters/registry.js";
import { DEFAULT_COLLECT_WINDOW_MS, DEFAULT_INBOX_CAP } from "../../queue/types.js";
import { DEFAULT_KEY_PREFIX } from "../../redis-keys.js";
import { BudgetsSchema } from "./budgets-schema.js";
import { SchedulesSchema } from "./schedules-schema.js";

const THINKING_LEVEL_VALUES = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
const DELIVERY_MODE_VALUES = ["steer", "followUp", "collect", "interrupt"] as const;
const DM_POLICY_VALUES = ["allowlist", "open", "disabled"] as const;
const MODEL_API_VALUES = [
  "anthropic-messages",
  "openai-completions",
  "openai-responses",
  "google-generative-ai",
] as const;
const LOG_LEVEL_VALUES = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
const SANDBOX_MODE_VALUES = ["auto", "bwrap", "none"] as const;
const SANDBOX_NETWORK_VALUES = ["none", "host"] as const;
const SETTINGS_POLICY_VALUES = ["admins", "everyone"] as const;
const BASH_APPROVAL_VALUES = ["auto", "always"] as const;

/** Settings every platform shares: who may talk to the bot, and how messages are delivered. */
function channelCommon() {
  return {
    enabled: Type.Optional(
      Type.Boolean({
        description:
          "Run this channel. Absent: on when its tokens are set (web chat: on when no platform channel is on).",
      }),
    ),
    admins: StringList("Platform user ids who may approve tool calls and change settings."),
    allowedUsers: StringList("User ids allowed to talk to the bot; empty means everyone."),
    allowedChannels: StringList("Channel/chat ids the bot answers in; empty means every channel it is in."),
    requireMention: Type.Boolean({
      default: true,
      description: "Answer in channels only when mentioned (replies in a bot thread count as mentions).",
    }),
    dmPolicy: StringEnum(DM_POLICY_VALUES, {
      default: "allowlist",
      description:
        "Direct messages: allowlist (only admins and allowedUsers), open (anyone allowed in channels), disabled.",
    }),
    deliveryMode: StringEnum(DELIVERY_MODE_VALUES, {
      default: "steer",
      description:
        "What a message does while the thread's agent is busy: steer, followUp, collect, interrupt.",
    }),
    collectWindowMs: Type.Integer({
      default: DEFAULT_COLLECT_WINDOW_MS,
      minimum: 0,
      description: "collect mode: messages within this window merge into one follow-up.",
    }),
    inboxCap: Type.Integer({
      default: DEFAULT_INBOX_CAP,
      minimum: 1,
      description: "Most messages waiting for a busy thread; more are dropped with a notice.",
    }),
    tools: Type.Optional(
      Type.Array(Type.String(), {
        description: "Names of the tools the agent may use here; absent means all.",
      }),
    ),
    settings: Type.Optional(
      StringEnum(SETTINGS_POLICY_VALUES, {
        description:
          "Who may change a thread's model and thinking level (/model, /thinking): admins or everyone. Absent: admins in channels and groups, everyone in direct messages.",
      }),
    ),
    bashApproval: StringEnum(BASH_APPROVAL_VALUES, {
      default: "auto",
      description:
        "auto: bash runs without asking inside the sandbox (except commands matching approval.bashPatterns) and always asks without one; always: every bash call waits for an admin.",
    }),
    ackReaction: Type.String({
      default: "👀",
      description: "Reaction added to a mention once it is queued; empty string disables it.",
    }),
    historyLimit: Type.Integer({
      default: 20,
      minimum: 0,
      description: "Earlier thread messages given as context when the bot is first mentioned in a thread.",
    }),
    editIntervalMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        description: "Minimum time between edits of one message; absent means the platform's default.",
      }),
    ),
    files: Obj(
      {
        enabled: Type.Boolean({
          default: true,
          description:
            "Fetch the files people post into the thread's workspace, and let the agent send files (send_file).",
        }),
        maxFileMb: Type.Number({
          default: 20,
          exclusiveMinimum: 0,
          description:
            "Largest file taken or sent, in MB (held under the platform's own limit: Telegram fetches 20 MB, Discord bots send 10 MB).",
        }),
        maxMessageMb: Type.Number({
          default: 50,
          exclusiveMinimum: 0,
          description: "Most MB taken from one message, all its files together.",
        }),
        maxFilesPerMessage: Type.Integer({
          default: 10,
          minimum: 1,
          description: "Most files taken from one message; the rest are named as not taken.",
        }),
      },
      "Files people post and the agent sends back (docs/channels.md, Files).",
    ),
  };
}

/** The TypeBox properties every channel's section has (access, delivery, rendering). */
export type ChannelCommonProperties = ReturnType<typeof channelCommon>;

/** The schema of `channels.<name>` for each definition of a registry: shared and own settings. */
export type ChannelSchemas<R> = {
  [P in keyof R]: R[P] extends ChannelDefinition<infer F> ? TObject<ChannelCommonProperties & F> : never;
};

/** The `channels` section for the channels of `registry`. */
function channelsSchema<R extends Readonly<Record<string, { fields: TProperties; description: string }>>>(
  registry: R,
): TObject<ChannelSchemas<R>> {
  const sections: TProperties = {};
  for (const [name, definition] of Object.entries(registry))
    sections[name] = Obj({ ...channelCommon(), ...definition.fields }, definition.description);
  return Obj(sections, "Chat platforms.") as unknown as TObject<ChannelSchemas<R>>;
}

export const CustomModelSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: "Provider name used in model refs (e.g. ollama)." }),
    id: Type.String({ minLength: 1, description: "Model id sent to the API." }),
    name: Type.Optional(Type.String({ description: "Display name (default: the id)." })),
    api: StringEnum(MODEL_API_VALUES, { description: "Wire API the server speaks." }),
    baseUrl: Type.Optional(
      Type.String({
        pattern: "^https?://",
        title: "an http:// or https:// URL",
        description: "API base URL.",
      }),
    ),
    apiKeyEnv: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
        title: "an environment variable name",
        description: "Environment variable holding the API key; absent for servers that need none.",
      }),
    ),
    contextWindow: Type.Integer({ default: 128000, minimum: 1, description: "Context window in tokens." }),
    maxTokens: Type.Integer({ default: 8192, minimum: 1, description: "Most output tokens per request." }),
    reasoning: Type.Boolean({ default: false, description: "Whether the model supports thinking." }),
    thinkingLevels: Type.Optional(
      Type.Array(StringEnum(THINKING_LEVEL_VALUES), { description: "Thinking levels the model accepts." }),
    ),
    input: Type.Array(StringEnum(["text", "image"] as const), {
      default: ["text"],
      description: "Input kinds: text, image.",
    }),
    cost: Obj(
      {
        input: Type.Number({ default: 0, minimum: 0 }),
        output: Type.Number({ default: 0, minimum: 0 }),
        cacheRead: Type.Number({ default: 0, minimum: 0 }),
        cacheWrite: Type.Number({ default: 0, minimum: 0 }),
      },
      "US dollars per million tokens.",
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Extra request headers (no secrets: use env).",
      }),
    ),
    compat: Type.Optional(
      Type.Object(
        {
          maxTokensField: Type.Optional(StringEnum(["max_completion_tokens", "max_tokens"] as const)),
          supportsReasoningEffort: Type.Optional(Type.Boolean()),
          supportsDeveloperRole: Type.Optional(Type.Boolean()),
          supportsUsageInStreaming: Type.Optional(Type.Boolean()),
          supportsStreamOptions: Type.Optional(Type.Boolean()),
        },
        {
          additionalProperties: false,
          description: "Quirks of OpenAI-compatible servers; unset = detected.",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ModelsSchema = Obj(
  {
    default: Type.Optional(
      Type.String({
        pattern: "^\\S+$",
        title: 'a model, e.g. "anthropic/claude-sonnet-4-5" or its bare id "claude-sonnet-4-5"',
        description:
          "Model new threads use, as provider/id or a bare id (as /model takes it). Absent: the first model with credentials.",
      }),
    ),
    thinkingLevel: StringEnum(THINKING_LEVEL_VALUES, {
      default: "off",
      description: "Thinking level new threads use (clamped to what the model supports).",
    }),
    vision: Type.Optional(
      Type.String({
        pattern: "^[^/\\s]+/\\S+$",
        title: '"provider/model-id" of a model that sees pictures',
        description:
          "Describes pictures people post for threads whose model cannot see them (its input lacks image). Absent: such models get the picture's path only.",
      }),
    ),
    custom: Type.Array(CustomModelSchema, {
      default: [],
      description: "Extra models (local servers, proxies, new releases).",
    }),
    stallTimeoutMs: Type.Integer({
      default: 120000,
      minimum: 0,
      description:
        "A model that sends nothing for this long (before its first byte or between two) has stalled: the reply ends with an error saying so. 0: wait forever.",
    }),
    waitNoticeMs: Type.Integer({
      default: 8000,
      minimum: 0,
      description:
        'After this long without a word from the model, the chat shows "still waiting for the model…" until it answers. 0: never.',
    }),
  },
  "Models.",
);

export const AgentSchema = Obj(
  {
    systemPrompt: Type.Optional(
      Type.String({ description: "System prompt; absent means the built-in one." }),
    ),
    systemPromptFile: Type.Optional(Type.String({ description: "File holding the system prompt." })),
    workspaceDir: Type.String({
      default: "./workspace",
      description: "Directory the agent's file and shell tools work in; relative to the config file.",
    }),
    compaction: Obj(
      {
        enabled: Type.Boolean({
          default: true,
          description:
            "Compact automatically when the context nears the model's window (/compact always works).",
        }),
        reserveTokens: Type.Integer({
          default: 16384,
          minimum: 0,
          description:
            "Tokens kept free for the reply: compaction starts above contextWindow − reserveTokens.",
        }),
        keepRecentTokens: Type.Integer({
          default: 20000,
          minimum: 0,
          description: "Newest conversation kept word for word after a compaction.",
        }),
      },
      "Compaction of long conversations into a summary (docs/sessions.md).",
    ),
  },
  "The agent.",
);

export const RuntimeSchema = Obj(
  {
    redisUrl: Type.Optional(
      Type.String({
        pattern: "^rediss?://",
        title: "a redis:// or rediss:// URL",
        description:
          "Redis URL. Default: $REDIS_URL. Absent (and no redisCluster): embedded runtime with files under dataDir.",
      }),
    ),
    redisCluster: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        title: "seed nodes of a Redis Cluster",
        description:
          "Seed nodes of a Redis Cluster (redis://host:port, rediss://… or host:port; a few suffice). Default: $REDIS_CLUSTER (comma-separated). Instead of redisUrl.",
      }),
    ),
    keyPrefix: Type.String({
      default: DEFAULT_KEY_PREFIX,
      minLength: 1,
      description: "Prefix of every Redis key and queue.",
    }),
    queuePrefix: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "BullMQ prefix of the runs queue. Default: keyPrefix without its colon (sb), or {sb-runs} on a cluster, where it needs a hash tag.",
      }),
    ),
    waitReplicas: Type.Integer({
      default: 0,
      minimum: 0,
      description:
        "Replicas that must confirm each inbox append (Redis WAIT) before the platform is acknowledged; fewer in time refuse the delivery, so the platform redelivers. 0: asynchronous replication.",
    }),
    waitReplicasTimeoutMs: Type.Integer({
      default: 500,
      minimum: 1,
      description: "How long an inbox append waits for waitReplicas.",
    }),
    concurrency: Type.Integer({
      // DEFAULT_CONCURRENCY of the runtime (src/queue/worker/worker-core.ts).
      default: 64,
      minimum: 1,
      description:
        "Threads one worker process runs at once. Runs mostly wait on the model, so this is bounded by memory (about 47 KB of heap per running thread, measured), not CPU.",
    }),
    leaseTtlMs: Type.Integer({
      default: 30000,
      minimum: 1000,
      description: "A thread's lease expires this long after its holder stops renewing it.",
    }),
    shutdownGraceMs: Type.Integer({
      default: 10000,
      minimum: 0,
      description: "On SIGTERM, time given to running turns before they are aborted.",
    }),
    idleEvictMs: Type.Integer({
      default: 600000,
      minimum: 1000,
      description: "An idle thread's agent is dropped from memory after this long.",
    }),
    dataDir: Type.String({
      default: "./data",
      description: "Embedded mode: where sessions and state are stored; relative to the config file.",
    }),
  },
  "Queue and worker runtime.",
);

export const DEFAULT_BASH_APPROVAL_PATTERNS = [
  "\\brm\\s+-[a-zA-Z]*[rf]",
  "\\bsudo\\b",
  "\\bgit\\s+push\\b",
  "\\b(curl|wget)\\b[^|]*\\|\\s*(ba|z)?sh\\b",
  "\\b(mkfs|dd|shutdown|reboot)\\b",
];

export const ApprovalSchema = Obj(
  {
    bashPatterns: Type.Array(Type.String(), {
      default: DEFAULT_BASH_APPROVAL_PATTERNS,
      description:
        "Regular expressions (JavaScript syntax); a bash command matching one always asks for approval, even in the sandbox. A convenience, not a guard: the sandbox is the guard.",
    }),
    timeoutMs: Type.Integer({
      default: 600000,
      minimum: 1000,
      description: "An approval request not answered within this time is denied.",
    }),
    tools: StringList("Tools that always need approval."),
  },
  "Approval of dangerous tool calls by an admin.",
);

const SandboxLimitsSchema = Obj(
  {
    cpuSeconds: Type.Integer({ default: 300, minimum: 1, description: "CPU seconds per process." }),
    memoryMb: Type.Integer({
      default: 2048,
      minimum: 16,
      description:
        "Address space per process, in MB: every mapping counts (heap, shared and anonymous memory, mapped files). Programs that reserve more than they use (the JVM, WebAssembly) need more or their own flags.",
    }),
    fileSizeMb: Type.Integer({
      default: 1024,
      minimum: 1,
      description: "Largest file a process may write, in MB.",
    }),
    processes: Type.Integer({
      default: 256,
      minimum: 8,
      description: "Processes and threads one command may run at once (inside the sandbox).",
    }),
    tmpSizeMb: Type.Integer({
      default: 256,
      minimum: 1,
      description: "Size of the private /tmp (and /dev/shm) of one command, in MB (inside the sandbox).",
    }),
    workspaceMb: Type.Integer({
      default: 2048,
      minimum: 1,
      description:
        "Disk one thread's workspace may use, in MB; writes past it are refused with a clear error (with or without the sandbox).",
    }),
  },
  "Limits of every process a tool starts; hitting one gives the model a clear error.",
);

const SandboxSchema = Obj(
  {
    mode: StringEnum(SANDBOX_MODE_VALUES, {
      default: "auto",
      description:
        "auto: bubblewrap when it works here (checked at start), else none; bwrap: bubblewrap or refuse to start; none: no sandbox (every bash call then needs an admin's approval).",
    }),
    network: StringEnum(SANDBOX_NETWORK_VALUES, {
      default: "none",
      description: "none: tool processes have no network at all; host: they share the host's network.",
    }),
    env: Type.Array(
      Type.String({
        pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
        title: "an environment variable name",
      }),
      {
        default: [],
        description:
          "Names of environment variables passed from the gateway into tool processes (besides PATH, HOME, LANG, TERM). Every chat user can read them.",
      },
    ),
    readOnlyPaths: Type.Array(Type.String({ pattern: "^/", title: "an absolute path" }), {
      default: [],
      description: "Extra host paths tool processes see read-only at the same path (e.g. /opt/toolchain).",
    }),
    limits: SandboxLimitsSchema,
  },
  "The sandbox every process a tool starts runs in.",
);

const MCP_APPROVAL_VALUES = ["allow", "ask", "deny"] as const;
const McpApproval = (description: string) => StringEnum(MCP_APPROVAL_VALUES, { description });

const McpServerSchema = Type.Object(
  {
    name: Type.String({
      pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,23}$",
      title: "1-24 letters, digits or '-'",
      description: "Unique name; the agent sees the server's tools as <name>_<tool>.",
    }),
    command: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description:
          "A local server: the program and its arguments (stdio), started in the thread's sandbox with its workspace as working directory. Set this or url.",
      }),
    ),
    url: Type.Optional(
      Type.String({
        pattern: "^https?://",
        title: "an http:// or https:// URL",
        description:
          "A remote server's Streamable HTTP endpoint, called from the worker. Set this or command.",
      }),
    ),
    headers: Type.Record(Type.String(), Type.String(), {
      default: {},
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${VAR} syntax
      description: "Request headers of a remote server; credentials as ${VAR} references.",
    }),
    env: Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }), Type.String(), {
      default: {},
      description:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${VAR} syntax
        "Variables a local server gets besides tools.sandbox.env (its own credentials as ${VAR} references; no other tool process gets them).",
    }),
    network: StringEnum(SANDBOX_NETWORK_VALUES, {
      default: "none",
      description: "A local server's network: none, or the host's (a server that calls an API).",
    }),
    trusted: Type.Boolean({
      default: false,
      description: "Its tools run without an admin's approval unless approval or toolApproval says ask.",
    }),
    approval: Type.Optional(
      McpApproval(
        "Default for its tools: allow, ask (an admin approves each call) or deny. Absent: allow when trusted, else ask.",
      ),
    ),
    toolApproval: Type.Record(Type.String(), McpApproval("allow, ask or deny"), {
      default: {},
      description: "Per tool (the server's own tool name): allow, ask or deny.",
    }),
    allowTools: Type.Optional(
      Type.Array(Type.String(), { description: "Only these of its tools are offered." }),
    ),
    denyTools: StringList("These of its tools are never offered."),
    channels: Type.Optional(
      Type.Array(Type.String(), {
        description: "Platforms whose threads get its tools (e.g. [slack, web]); absent: all.",
      }),
    ),
    callTimeoutMs: Type.Integer({ default: 60000, minimum: 100, description: "Longest one call may take." }),
    startTimeoutMs: Type.Integer({
      default: 20000,
      minimum: 100,
      description: "Longest starting (or connecting) and listing its tools may take.",
    }),
    idleTimeoutMs: Type.Integer({
      default: 600000,
      minimum: 1000,
      description: "A local server's process in a thread stops after this long without a call there.",
    }),
  },
  { additionalProperties: false, description: "One MCP server." },
);

const McpSchema = Obj(
  {
    servers: Type.Array(McpServerSchema, {
      default: [],
      description: "Model Context Protocol servers whose tools the agent gets.",
    }),
  },
  "The team's own tools, from MCP servers (docs/tools.md, MCP servers).",
);

export const ToolsSchema = Obj({ sandbox: SandboxSchema, mcp: McpSchema }, "Built-in tools and MCP servers.");

export const ExtensionsSchema = Obj(
  {
    modules: StringList("Extension modules to load (paths relative to the config file, or package names)."),
  },
  "Extensions.",
);

export const HttpSchema = Obj(
  {
    host: Type.String({
      default: "127.0.0.1",
      description: "Address to bind; anything but loopback needs a token.",
    }),
    port: Type.Integer({
      default: 8787,
      minimum: 0,
      maximum: 65535,
      description: "Port (0: any free port).",
    }),
    token: Type.Optional(
      Type.String({
        minLength: 16,
        description:
          "Access token (16+ characters) for everything but /healthz and /readyz. Default: $SWITCHBOARD_HTTP_TOKEN.",
      }),
    ),
    tokenFile: SecretFile("the access token"),
    publicUrl: Type.Optional(
      Type.String({
        pattern: "^https?://",
        title: "an http:// or https:// URL",
        description: "URL people and platforms reach this server at (printed, used for webhooks).",
      }),
    ),
  },
  "HTTP server: health, metrics, webhooks, web chat.",
);

export const LoggingSchema = Obj(
  {
    level: StringEnum(LOG_LEVEL_VALUES, { default: "info", description: "Least severe level written." }),
  },
  "Logs (JSON lines on stdout).",
);

/** The whole file's schema for the channels of `registry` (a test may add its own platform). */
export function configSchema<
  R extends Readonly<Record<string, { fields: TProperties; description: string }>>,
>(registry: R) {
  return Type.Object(
    {
      channels: channelsSchema(registry),
      models: ModelsSchema,
      agent: AgentSchema,
      runtime: RuntimeSchema,
      approval: ApprovalSchema,
      tools: ToolsSchema,
      extensions: ExtensionsSchema,
      http: HttpSchema,
      logging: LoggingSchema,
      schedules: SchedulesSchema,
      budgets: BudgetsSchema,
    },
    {
      additionalProperties: false,
      // `x-…` keys hold YAML anchors to share settings (`x-team: &team …`, then `<<: *team`); ignored.
      patternProperties: { "^x-": {} },
      title: "Switchboard configuration",
    },
  );
}

/** The config file's schema with the built-in channels. */
export const ConfigSchema = configSchema(CHANNELS);

/** The config as validated, before resolution (tokens and `enabled` not yet decided). */
export type ValidatedConfig = Static<typeof ConfigSchema>;
