/**
 * The /etc a sandbox sees: a read-only copy, made once per process, of the allowlisted entries of
 * the host's /etc. One bind mount of the copy costs a fraction of one mount per entry (about half of
 * a sandbox's start time went into those). Nested symlinks (`/etc/alternatives/*`,
 * `/etc/ssl/certs/*`) are kept as links, since they point into /usr, which the sandbox has;
 * top-level links (`/etc/localtime`, a resolv.conf managed elsewhere) are copied as what they point
 * to. Private key directories and anything the gateway cannot read stay out.
 */
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The /etc entries a command may need (users and groups for `id`, name resolution for
 * `network: host`, TLS roots, the dynamic linker, locale and terminal data, interpreters' own
 * settings). Everything else in /etc (shadow files, sudoers, ssh keys, package manager credentials,
 * a config file placed there) stays out, and so do the system-wide settings of clients that
 * commonly hold credentials (`gitconfig`: credential helpers and tokens in URLs; `wgetrc`: passwords).
 */
export const ETC_ALLOWLIST = [
  "alternatives",
  "bash.bashrc",
  "ca-certificates",
  "ca-certificates.conf",
  "crypto-policies",
  "debian_version",
  "fonts",
  "gai.conf",
  "group",
  "host.conf",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.conf",
  "localtime",
  "magic",
  "magic.mime",
  "mime.types",
  "networks",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "perl",
  "pki",
  "profile",
  "protocols",
  "python3",
  "resolv.conf",
  "services",
  "shells",
  "ssl",
  "terminfo",
  "timezone",
  "vim",
  "xml",
] as const;

/** Entries under these names are never copied (TLS private keys). */
const SKIPPED_NAMES = new Set(["private"]);

function copyTree(src: string, dst: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(src);
  } catch {
    return;
  }
  try {
    if (st.isSymbolicLink()) {
      symlinkSync(readlinkSync(src), dst);
    } else if (st.isDirectory()) {
      const names = readdirSync(src);
      mkdirSync(dst, { mode: 0o755 });
      for (const name of names) if (!SKIPPED_NAMES.has(name)) copyTree(join(src, name), join(dst, name));
    } else if (st.isFile()) {
      // The copy keeps the file's mode: what only its owner may read stays that way.
      copyFileSync(src, dst);
    }
  } catch {
    // Unreadable for the gateway's user (root-only files): the sandbox does not get it either.
  }
}

function copyTopLevel(src: string, dst: string): void {
  let st: ReturnType<typeof statSync>;
  try {
    // Top-level links are followed: what they point to may be outside the sandbox (/run/…).
    st = statSync(src);
  } catch {
    return;
  }
  if (st.isDirectory()) copyTree(src, dst);
  else if (st.isFile()) {
    try {
      copyFileSync(src, dst);
    } catch {
      // unreadable: left out
    }
  }
}

/** A copy of the allowlisted entries of `${hostRoot}/etc`, readable by everyone; `remove` deletes it. */
export interface EtcView {
  readonly dir: string;
  remove(): void;
}

/**
 * Where the copy goes: /dev/shm when it is there and writable (a tmpfs: the copy takes a few ms
 * instead of hundreds on a slow disk), else the system's temporary directory.
 */
function viewBase(): string {
  try {
    accessSync("/dev/shm", constants.W_OK | constants.X_OK);
    return "/dev/shm";
  } catch {
    return tmpdir();
  }
}

/** Makes the copy (under /dev/shm, or the temporary directory). */
export function createEtcView(hostRoot = "", names: readonly string[] = ETC_ALLOWLIST): EtcView {
  const dir = mkdtempSync(join(viewBase(), "switchboard-etc-"));
  // mkdtemp makes it 0700; the sandbox may run as another user (nobody) that must read it.
  chmodSync(dir, 0o755);
  for (const name of names) copyTopLevel(`${hostRoot}/etc/${name}`, join(dir, name));
  return {
    dir,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
