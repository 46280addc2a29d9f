/**
 * Configuration: schema, loading, env substitution, secrets, and the typed slices each module
 * receives.
 */

export { substituteString } from "./env.js";
export { ConfigError, type ConfigIssue, formatIssue } from "./errors.js";
export { buildEditorSchema } from "./json-schema.js";
export {
  findConfigFile,
  loadConfig,
  loadConfigOrThrow,
  parseConfigText,
} from "./loader.js";
export { customModelToModel } from "./models.js";
export { redisTargetOf } from "./redis-target.js";
export { ConfigSchema, DEFAULT_BASH_APPROVAL_PATTERNS } from "./schema.js";
export { collectSecretValues } from "./secrets.js";
export type * from "./types.js";
