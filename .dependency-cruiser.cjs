/**
 * The layer table of docs/architecture.md, enforced by `npm run check` (dependency-cruiser over
 * src/, type-only imports included). Each rule names the line of the table it guards; a violation
 * prints the rule's comment, which says what to do instead.
 */

/** Packages that talk to Redis, HTTP clients and servers, or a chat platform. */
const INFRASTRUCTURE = "^node_modules/(ioredis|bullmq|hono|@hono|pino|prom-client|ws|discord\\.js|@discordjs|@slack|grammy|@grammyjs)/";
const PLATFORM_SDKS = [
  { platform: "discord", packages: "discord\\.js|@discordjs" },
  { platform: "slack", packages: "@slack" },
  { platform: "telegram", packages: "grammy|@grammyjs" },
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment:
        "An import cycle (type-only imports count too). Move what both sides need into a module of its own " +
        "(an interface the one side implements and the other uses), as src/extensions/registry.ts does.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "engine-imports-only-itself",
      severity: "error",
      comment:
        "src/agent is the engine: it imports nothing outside src/agent (no Redis, no chat SDKs, no queue). " +
        "Pass what it needs in (a hook, a stream function, a Clock).",
      from: { path: "^src/agent/" },
      to: { path: "^src/(?!agent/)" },
    },
    {
      name: "llm-imports-only-itself",
      severity: "error",
      comment:
        "src/agent/llm (the protocol, providers, models) imports only itself and the error base " +
        "(src/agent/errors.ts, which imports nothing), so it stands on its own.",
      from: { path: "^src/agent/llm/" },
      to: { path: "^src/agent/(?!llm/)", pathNot: "^src/agent/errors\\.ts$" },
    },
    {
      name: "engine-has-no-infrastructure",
      severity: "error",
      comment: "The engine uses no Redis client, HTTP framework, logger or chat SDK; inject what it needs.",
      from: { path: "^src/agent/" },
      to: { path: INFRASTRUCTURE },
    },
    {
      name: "adapters-below-the-runtime",
      severity: "error",
      comment:
        "src/adapters may not import the queue, the extensions or the gateway: those use adapters, " +
        "through the ChannelAdapter contract. Take what the adapter needs as a constructor argument.",
      from: { path: "^src/adapters/" },
      to: { path: "^src/(queue|extensions|gateway)/|^src/main\\.ts$" },
    },
    {
      name: "adapters-use-engine-types",
      severity: "error",
      comment:
        "src/adapters use the engine's types (type-only imports), its Clock, its secret scrubber and its " +
        "basics (the logger, the error base); nothing else of src/agent.",
      from: { path: "^src/adapters/" },
      to: {
        path: "^src/agent/",
        pathNot: "^src/agent/(clock|logger|errors|llm/redact)\\.ts$",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "adapters-have-no-redis",
      severity: "error",
      comment:
        "Adapters get shared state through seams (KeyValueStore, EventDeduper, RateLimiter, " +
        "ConnectionLease) that the gateway implements over Redis; they import no Redis client.",
      from: { path: "^src/adapters/" },
      to: { path: "^node_modules/(ioredis|bullmq)/" },
    },
    ...PLATFORM_SDKS.map(({ platform, packages }) => ({
      name: `${platform}-sdk-only-in-its-adapter`,
      severity: "error",
      comment: `The ${platform} SDK is imported only inside src/adapters/${platform}/; nothing of it crosses that folder.`,
      from: { path: "^src/", pathNot: `^src/adapters/${platform}/` },
      to: { path: `^node_modules/(${packages})/` },
    })),
    {
      name: "runtime-below-the-gateway",
      severity: "error",
      comment: "src/queue may not import the gateway (config, wiring); the gateway passes what the runtime needs.",
      from: { path: "^src/queue/" },
      to: { path: "^src/gateway/|^src/main\\.ts$" },
    },
    {
      name: "worker-has-no-backend",
      severity: "error",
      comment:
        "src/queue/worker is written against the state seams (src/queue/state, src/queue/lease/store.ts, " +
        "src/queue/store/types.ts) only: no Redis, no embedded backend, no file store. A backend implements a " +
        "seam; the runtime (redis-runtime.ts, embedded-runtime.ts) hands it to the worker.",
      from: { path: "^src/queue/worker/" },
      to: {
        path: [INFRASTRUCTURE, "^src/queue/(redis|embedded)/", "^src/queue/lease/redis-store\\.ts$", "^src/queue/store/(?!types|errors)"],
      },
    },
    {
      name: "runtime-uses-adapter-contracts",
      severity: "error",
      comment:
        "src/queue uses the adapter contracts only: src/adapters/types.ts and the web chat's store seam " +
        "(store-types, auth-store and their ids/model/conversation-state helpers), which src/queue/store " +
        "implements over Redis.",
      from: { path: "^src/queue/" },
      to: {
        path: "^src/adapters/",
        pathNot: "^src/adapters/(types|web/(store-types|auth-store|conversation-state|ids|model))\\.ts$",
      },
    },
    {
      name: "extensions-import-only-the-engine",
      severity: "error",
      comment:
        "src/extensions import only the engine (src/agent). A Redis-backed or platform-specific part " +
        "goes behind a seam in the runtime or the gateway, as NoticeMemory and ApprovalStore do.",
      from: { path: "^src/extensions/" },
      to: { path: "^src/(adapters|queue|gateway)/|^src/main\\.ts$" },
    },
    {
      name: "extensions-have-no-infrastructure",
      severity: "error",
      comment: "Extensions use no Redis client, HTTP framework, process logger or chat SDK; the host gives them what they need.",
      from: { path: "^src/extensions/" },
      to: { path: INFRASTRUCTURE },
    },
    {
      name: "no-test-code-in-src",
      severity: "error",
      comment: "src/ never imports tests, fakes or benchmarks.",
      from: { path: "^src/" },
      to: { path: "^(test|bench|scripts)/" },
    },
    {
      name: "no-dev-dependencies-at-run-time",
      severity: "error",
      comment:
        "The compiled build runs with the production dependencies only; move the package to " +
        "`dependencies` or import it as a type.",
      from: { path: "^src/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-unresolvable-imports",
      severity: "error",
      comment: "This import resolves to nothing (a typo, or a package missing from package.json).",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "^node_modules/" },
    exclude: { path: "^dist/" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
