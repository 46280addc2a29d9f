/**
 * Building blocks of the config file's schema (TypeBox), shared by the gateway's schema and the
 * channel definitions that declare a platform's settings next to its adapter
 * (`src/adapters/<platform>/channel.ts`).
 *
 * Convention: a property with a `default` is declared required, so its static type is
 * non-optional; AJV (`useDefaults`) fills it before the `required` check, and the editor schema
 * drops it from `required`. Secrets never appear literally in the file: they are `${ENV_VAR}`
 * references or `…File` paths, recognised by their field name.
 */
import { Type } from "@sinclair/typebox";

/** A string restricted to `values`, emitted as a JSON Schema `enum` (clear errors, editor completion). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { default?: T[number]; description?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/** An object section: no unknown keys, `{}` by default, so its own defaults fill in. */
export function Obj<T extends Parameters<typeof Type.Object>[0]>(properties: T, description: string) {
  return Type.Object(properties, { additionalProperties: false, default: {}, description });
}

/** A list of strings, empty by default. */
export const StringList = (description: string) => Type.Array(Type.String(), { default: [], description });

/** A secret: a `${ENV_VAR}` reference in the file, resolved by the loader. */
export const Secret = (description: string) => Type.Optional(Type.String({ description }));

/** A file holding a secret (e.g. a Docker secret), read by the loader into the field without `File`. */
export const SecretFile = (of: string) =>
  Type.Optional(
    Type.String({
      description: `Path of a file holding ${of} (trailing newline trimmed); relative to the config file.`,
    }),
  );
