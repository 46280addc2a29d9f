/**
 * Turns the `extensions` section of the config into loadable entries: built-ins by name, other
 * extensions by module path (dynamic import of the module's default export). A module that cannot
 * be imported becomes an entry whose factory fails, so the runner reports and disables it like any
 * other failing extension (the gateway refuses such a config before, with `importExtensionModule`).
 */
import { basename, extname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { errorText } from "../agent/errors.js";
import type { ExtensionEntry, ExtensionFactory } from "./types.js";

/** One entry of the config's `extensions` list. Exactly one of `builtin` and `module` is set. */
export interface ExtensionConfigEntry {
  /** Name of a built-in extension (`commands`, `approval`, `tools`, `sub-agent`, …). */
  builtin?: string;
  /**
   * A module whose default export is an `ExtensionFactory`: a path (relative to `baseDir`, or
   * absolute) or a package name.
   */
  module?: string;
  /** Name used in reports and for provider cleanup. Default: the built-in's name or the module's file name. */
  name?: string;
  /** Passed to the extension as `api.options`. */
  options?: unknown;
  /** Default true. */
  enabled?: boolean;
}

export interface LoadConfigOptions {
  /** Built-in factories by name, created by the wiring with their dependencies. */
  builtins: Readonly<Record<string, ExtensionFactory>>;
  /** Directory relative module paths are resolved against (the config file's). Default: the cwd. */
  baseDir?: string;
}

function failing(name: string, message: string): ExtensionEntry {
  return {
    name,
    factory: () => {
      throw new Error(message);
    },
  };
}

function moduleName(spec: string): string {
  const base = basename(spec);
  return base.slice(0, base.length - extname(base).length) || spec;
}

function isPath(spec: string): boolean {
  return spec.startsWith(".") || isAbsolute(spec);
}

/**
 * Resolves config entries (in order) into `ExtensionEntry`s for `ExtensionRunner.load`. Never
 * rejects: an unknown built-in, a bad entry, an import error or a default export that is not a
 * function yields an entry that fails at load, with a message saying how to fix it.
 */
export async function resolveExtensionEntries(
  config: readonly ExtensionConfigEntry[],
  options: LoadConfigOptions,
): Promise<ExtensionEntry[]> {
  const out: ExtensionEntry[] = [];
  for (const [index, entry] of config.entries()) {
    if (entry.enabled === false) continue;
    if (entry.builtin && entry.module) {
      out.push(failing(entry.name ?? `extension #${index + 1}`, "Set either builtin or module, not both."));
      continue;
    }
    if (entry.builtin) {
      const name = entry.name ?? entry.builtin;
      const factory = options.builtins[entry.builtin];
      out.push(
        factory
          ? { name, factory, options: entry.options }
          : failing(
              name,
              `Unknown built-in extension "${entry.builtin}". Built-ins: ${Object.keys(options.builtins).join(", ") || "none"}.`,
            ),
      );
      continue;
    }
    if (!entry.module) {
      out.push(
        failing(entry.name ?? `extension #${index + 1}`, "An extension entry needs builtin or module."),
      );
      continue;
    }
    const name = entry.name ?? moduleName(entry.module);
    const imported = await importExtensionModule(entry.module, options.baseDir);
    out.push(
      "factory" in imported
        ? { name, factory: imported.factory, options: entry.options }
        : failing(name, `Cannot load "${entry.module}": ${imported.problem}`),
    );
  }
  return out;
}

/**
 * Imports the extension module `spec` (a path, relative to `baseDir`, or a package name) and
 * returns its factory (the default export), or what is wrong with it, said for the person who
 * configured it: no such file, no such package, no default export function, or the error its
 * code threw while being imported. Never rejects. `switchboard check` and `start` both refuse a
 * configured module with a problem (src/gateway/app/preflight.ts).
 */
export async function importExtensionModule(
  spec: string,
  baseDir: string = process.cwd(),
): Promise<{ factory: ExtensionFactory } | { problem: string }> {
  const path = isPath(spec) ? resolve(baseDir, spec) : undefined;
  let mod: { default?: unknown };
  try {
    mod = (await import(path ? pathToFileURL(path).href : spec)) as { default?: unknown };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
    // Node names the first file it could not find, which may be one the module itself imports.
    const mentionsSpec = errorText(e).includes(path ?? `'${spec}'`);
    if (missing && mentionsSpec && path) return { problem: `no such file: ${path}` };
    if (missing && mentionsSpec)
      return {
        problem: `no package "${spec}" is installed in Switchboard's directory (npm install ${spec} there, or give a path starting with ./)`,
      };
    return { problem: `importing it failed: ${errorText(e)}` };
  }
  if (typeof mod.default !== "function")
    return { problem: "has no default export function; write export default (api) => { … }" };
  return { factory: mod.default as ExtensionFactory };
}
