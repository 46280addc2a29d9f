/**
 * The environment of tool processes, built from an allowlist: nothing of the gateway's own
 * environment (API keys, platform tokens, the HTTP token) reaches a command unless the config names
 * the variable.
 */

/** PATH inside the sandbox: the system directories it mounts. */
export const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/**
 * `PATH`, `HOME` (the workspace as the command sees it), `LANG`, `TERM=dumb`, then each variable of
 * `names` that is set in `source`. `path` is the PATH to use (the host's outside a sandbox).
 */
export function toolEnv(
  home: string,
  path: string,
  names: readonly string[],
  source: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: path,
    HOME: home,
    LANG: source.LANG ?? "C.UTF-8",
    TERM: "dumb",
  };
  for (const name of names) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
