/**
 * The web chat's stores of a deployment, wherever a process needs them: the gateway that serves the
 * page, the workers that render into it, and `switchboard import`, which makes an imported session a
 * conversation the page lists.
 */
import { join } from "node:path";
import {
  DirWebUploadStore,
  FileWebChatStore,
  MemoryWebAuthStore,
  type WebAuthStore,
  type WebChatStore,
  type WebUploadStore,
} from "../../adapters/web/index.js";
import type { RedisClient } from "../../queue/redis/client.js";
import type { Logger } from "../log.js";
import type * as RedisKitModule from "./redis-kit.js";

/** How often the embedded mode removes uploads past their keeping time. */
const SWEEP_INTERVAL_MS = 6 * 3600_000;

/**
 * Where the web chat keeps what the page shows, the files uploaded from it and who is signed in:
 * Redis when the process shares it with others (any gateway serves the page, any worker renders into
 * it and fetches its files), else files under `<dataDir>/web` and sign-ins in memory (a restart
 * prints a new sign-in link).
 */
export function webChatStores(
  shared: { redis: RedisClient; kit: typeof RedisKitModule } | undefined,
  prefix: string,
  dataDir: string,
  logger: Logger,
): {
  store: WebChatStore;
  auth: WebAuthStore;
  uploads: WebUploadStore;
  /** Without Redis: sweeps expired uploads now and every 6 hours; call the result to stop. */
  sweepUploads?: () => () => void;
} {
  const log = logger.child({ platform: "web" });
  const onWarning = (message: string, detail: Record<string, unknown>) => log.warn(detail, message);
  if (shared)
    return {
      store: new shared.kit.RedisWebChatStore({ redis: shared.redis, prefix, onWarning }),
      auth: new shared.kit.RedisWebAuthStore(shared.redis, prefix),
      uploads: new shared.kit.RedisWebUploadStore(shared.redis, prefix),
    };
  const uploads = new DirWebUploadStore(join(dataDir, "web", "files"));
  return {
    store: new FileWebChatStore({ dir: join(dataDir, "web"), onWarning }),
    auth: new MemoryWebAuthStore(),
    uploads,
    sweepUploads: () =>
      uploads.sweepEvery(SWEEP_INTERVAL_MS, (err) =>
        log.warn({ err }, "web chat: could not sweep old files"),
      ),
  };
}
