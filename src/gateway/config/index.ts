/**
 * Configuration: schema, loading, env substitution, secrets, and the typed slices each module
 * receives.
 */

export { type Env, substituteEnv, substituteString } from "./env.js";
export { ConfigError, type ConfigIssue, formatIssue } from "./errors.js";
export { buildEditorSchema } from "./json-schema.js";
export {
  DEFAULT_CONFIG_FILES,
  findConfigFile,
  type HttpOverrides,
  type LoadConfigOptions,
  type LoadConfigResult,
  loadConfig,
  loadConfigOrThrow,
  parseConfigText,
} from "./loader.js";
export { customModelToModel } from "./models.js";
export { describeRedisTarget, redisTargetOf } from "./redis-target.js";
export { isLoopbackHost } from "./resolve.js";
export { ConfigSchema, DEFAULT_BASH_APPROVAL_PATTERNS } from "./schema.js";
export { collectSecretValues, ENV_DEFAULTS, isSecretFieldName } from "./secrets.js";
export type * from "./types.js";
