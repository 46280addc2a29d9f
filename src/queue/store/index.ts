/**
 * Session storage: the `SessionStore` contract and its Redis and file implementations.
 */
export {
  EntryNotFoundError,
  InvalidEntryError,
  InvalidImportError,
  LeaseLostError,
  SessionNotFoundError,
  StoreError,
  type StoreErrorCode,
} from "./errors.js";
export { FileSessionStore, type FileSessionStoreOptions } from "./file-store.js";
export { SessionKeys } from "./keys.js";
export { RedisSessionStore, type RedisSessionStoreOptions } from "./redis-store.js";
export { decodeThreadKey, encodeThreadKey } from "./thread-dir.js";
export type * from "./types.js";
