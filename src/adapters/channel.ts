/**
 * What a platform is to the rest of Switchboard: its adapter folder plus one `ChannelDefinition`
 * (its `channel.ts`), listed once in `registry.ts`. The definition declares the platform's own
 * settings (a TypeBox schema the gateway merges with the settings every channel shares), where its
 * secrets come from, when it runs, what `check` says about it, and how to build its adapter. The
 * gateway builds, mounts (`routes`, `mounts`: the web chat's page too) and checks channels from
 * definitions and the `ChannelAdapter` contract; only the web chat's stores and sign-in link are
 * wired by name.
 */
import type { Static, TObject, TProperties } from "@sinclair/typebox";
import type { StructuredLogger } from "../agent/logger.js";
import type { ChannelAdapter, ConnectionLease, CredentialProbe, KeyValueStore } from "./types.js";
import type { WebAuthStore } from "./web/auth-store.js";
import type { WebChatStore, WebUploadStore } from "./web/store-types.js";

/** The shared settings a definition reads (the gateway declares all of them). */
export interface CommonChannelSettings {
  enabled: boolean;
  /** Platform user ids who may approve tool calls and change settings. */
  admins: string[];
  /** Minimum ms between edits of one message; absent: the platform's default. */
  editIntervalMs?: number;
  /** Files people post and the agent sends (`maxFileMb`: the largest one). */
  files?: { enabled: boolean; maxFileMb: number };
}

/** A channel's resolved config slice: its own settings and the shared ones. */
export type ChannelSlice<F extends TProperties> = Static<TObject<F>> & CommonChannelSettings;

/** A secret a channel needs to run: its field, its value, and the variable that sets it. */
export interface ChannelRequirement {
  field: string;
  value: unknown;
  variable: string;
}

/** A problem or doubt about one field of a channel's slice (`field` relative to the slice). */
export interface ChannelFieldNote {
  field: string;
  message: string;
}

/** What the gateway gives a definition to build its adapter. */
export interface ChannelBuildContext {
  /** False in worker processes: outbound only, never started. */
  inbound: boolean;
  /** Cross-process helpers (Redis mode), or the embedded mode's file store (`store` only). */
  shared: { store?: KeyValueStore; keyPrefix?: string };
  /**
   * A lease on a connection that must be unique across gateway processes (`name` says what,
   * e.g. `telegram:polling:<bot id>`). Present only on inbound processes in Redis mode.
   */
  lease?: (name: string) => ConnectionLease;
  /** The HTTP server's rule for the `Host` header of browser requests (the web chat's page). */
  isAllowedHost: (host: string | undefined) => boolean;
  /** Where the web chat keeps conversations, sign-ins and files (default: the adapter's memory). */
  webChat?: { store: WebChatStore; auth: WebAuthStore; uploads: WebUploadStore };
  logger: StructuredLogger;
}

/** One platform, as the registry lists it. `F`: the TypeBox properties of its own settings. */
export interface ChannelDefinition<F extends TProperties = TProperties> {
  /** One line for the config schema (`"Telegram."`). */
  description: string;
  /** The platform's own settings, merged with the shared ones into `channels.<name>`. */
  fields: F;
  /** Settings taken from the environment when the file leaves them out: field path → variable. */
  env?: Readonly<Record<string, string>>;
  /**
   * The secrets the channel runs with. With `enabled` absent the channel runs when all are set
   * (a warning when only some are); with `enabled: true` each missing one is a config issue.
   */
  requires?(slice: Static<TObject<F>>): ChannelRequirement[];
  /** With `enabled` absent: run when no other channel runs (the web chat). */
  fallback?: boolean;
  /** Problems of a running channel's settings (config issues). */
  issues?(slice: Static<TObject<F>>): ChannelFieldNote[];
  /** Doubts about a running channel's settings (warnings: a token of the wrong shape). */
  warnings?(slice: Static<TObject<F>>): ChannelFieldNote[];
  /** How `check` names the running channel (default: its name). */
  summary?(slice: ChannelSlice<F>): string;
  /**
   * The credential checks of `switchboard check`, the same as its adapter's `probe()` but without
   * building the adapter, so `check` loads no SDK. Absent: `check` builds the adapter (never
   * started) and runs its `probe()`.
   */
  probe?(slice: ChannelSlice<F>): CredentialProbe[];
  /** Whether `switchboard register-commands` can put commands in its menu. */
  commandMenu?: boolean;
  /**
   * Builds the adapter (loading the platform's SDK only now, by dynamic import). Throws when the
   * settings cannot make one, with what to set.
   */
  create(slice: ChannelSlice<F>, ctx: ChannelBuildContext): Promise<ChannelAdapter>;
}

/** Declares a channel; an identity function that lets TypeScript infer `F` from `fields`. */
export function defineChannel<F extends TProperties>(definition: ChannelDefinition<F>): ChannelDefinition<F> {
  return definition;
}

/**
 * A definition as a registry holds it, its settings' type erased: the registry's config schema
 * validated the slice it is given against the definition's own `fields`, which is what `F` says.
 */
export type RegisteredChannel = ChannelDefinition<TProperties>;

/** `definition` with its settings' type erased, for a `ChannelRegistry`. */
export function registered<F extends TProperties>(definition: ChannelDefinition<F>): RegisteredChannel {
  return definition as unknown as RegisteredChannel;
}

/** A required secret that is missing: what failed and how to fix it. */
export function required(value: string | undefined, field: string, envName: string): string {
  if (value) return value;
  throw new Error(`${field} is not set: set ${envName} (or the field's …File) to run this channel.`);
}
