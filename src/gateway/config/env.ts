/**
 * `${ENV_VAR}` substitution in the values of the parsed YAML tree (never in the raw text, so a
 * variable's value cannot inject YAML structure).
 *
 * - `${NAME}`: the variable's value; unset is an error naming the variable and the field.
 * - `${NAME:-default}`: the default when the variable is unset or empty.
 * - `$${` writes a literal `${`.
 * A value that was only references and resolves to the empty string is removed, so the field
 * counts as unset and its default applies (`redisUrl: ${REDIS_URL:-}` → embedded runtime).
 */
import { type ConfigIssue, joinPath } from "./errors.js";
import { isSecretFieldName } from "./secret-names.js";

/** Environment lookup; `process.env` in production, a plain object in tests. */
export type Env = Readonly<Record<string, string | undefined>>;

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type SubstitutionResult = { ok: true; value: string } | { ok: false; message: string };

/** Substitutes the references in one string value (`secret`: the field holds a secret, for the hint). */
export function substituteString(input: string, env: Env, secret = false): SubstitutionResult {
  let failure: string | undefined;
  const value = input.replace(REFERENCE, (match, body: string | undefined) => {
    if (match === "$${") return "${";
    if (body === undefined) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: names the literal "${" the user wrote
      failure ??= 'has "${" without a closing "}"';
      return match;
    }
    const sep = body.indexOf(":-");
    const name = sep === -1 ? body : body.slice(0, sep);
    if (!NAME.test(name)) {
      failure ??= `has an invalid variable reference "\${${body}}" (names are letters, digits and _)`;
      return match;
    }
    const current = env[name];
    if (sep !== -1) return current === undefined || current === "" ? body.slice(sep + 2) : current;
    if (current === undefined) {
      failure ??= secret
        ? `environment variable ${name} is not set (set it, or write \${${name}:-} to leave the field unset)`
        : `environment variable ${name} is not set (set it, or give a default: \${${name}:-value})`;
      return match;
    }
    return current;
  });
  return failure === undefined ? { ok: true, value } : { ok: false, message: failure };
}

/** Whether `value` consists only of `${…}` references (no literal text). */
export function isOnlyReferences(value: string): boolean {
  return /^(\$\{[^}]*\})+$/.test(value);
}

/** A variable a config field reads (`${NAME}`), by the field's path. */
export interface VariableReference {
  variable: string;
  /** The field, as config messages write it (`models.custom[0].headers.X-Auth`). */
  path: string;
  segments: readonly (string | number)[];
}

/** The variables `value` references (`${NAME}` and `${NAME:-default}`), in order. */
function referencedNames(value: string): string[] {
  const out: string[] = [];
  for (const m of value.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g))
    if (m[1]) out.push(m[1]);
  return out;
}

/**
 * Substitutes references in every string value of `tree` (in place), returning one issue per field
 * that could not be resolved (a field with an issue is removed, so validation does not also report
 * it) and every variable each field read (`references`), so that the variables behind credentials
 * can be kept from tool processes.
 */
export function substituteEnv(
  tree: unknown,
  env: Env,
): { issues: ConfigIssue[]; references: VariableReference[] } {
  const issues: ConfigIssue[] = [];
  const references: VariableReference[] = [];
  const note = (value: string, path: (string | number)[]) => {
    for (const variable of referencedNames(value))
      references.push({ variable, path: joinPath(path), segments: path });
  };
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === "string") {
          note(item, [...path, i]);
          const r = substituteString(item, env);
          if (r.ok) node[i] = r.value;
          else issues.push({ path: joinPath([...path, i]), message: r.message });
        } else visit(item, [...path, i]);
      }
      return;
    }
    if (node === null || typeof node !== "object") return;
    const obj = node as Record<string, unknown>;
    for (const [key, item] of Object.entries(obj)) {
      if (typeof item !== "string") {
        visit(item, [...path, key]);
        continue;
      }
      if (!item.includes("$")) continue;
      note(item, [...path, key]);
      const r = substituteString(item, env, isSecretFieldName(key));
      if (!r.ok) {
        issues.push({ path: joinPath([...path, key]), message: r.message });
        delete obj[key];
      } else if (r.value === "" && isOnlyReferences(item)) delete obj[key];
      else obj[key] = r.value;
    }
  };
  visit(tree, []);
  return { issues, references };
}
