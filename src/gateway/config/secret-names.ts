/**
 * Which field names hold secrets. One rule, shared by the config loader (refuse literals, read
 * `…File`), config error messages (never echo the value) and the log redactor (mask the field).
 */
const SECRET_NAME = /(token|secret|password|passwd|apikey|privatekey|credentials?|authorization|cookie)$/i;

/** Whether a field of this name holds a secret (`botToken`, `signingSecret`, `x-api-key`, `Authorization`…). */
export function isSecretFieldName(name: string): boolean {
  return SECRET_NAME.test(name.replace(/[-_]/g, ""));
}
