/**
 * Scheduled prompts, as one step of `createGateway`: the schedule store and firing engine of the
 * config's mode (Redis and BullMQ's job schedulers, or a file in `dataDir` and a timer on the
 * clock), the service on them, `/schedule`, and the run observer the runtime reports to. The
 * runtime is built after the extensions that `/schedule` belongs to, so the service reaches it
 * through a slot filled by `bind`.
 */
import { join } from "node:path";
import { type Clock, systemClock } from "../../agent/clock.js";
import { parseSchedule } from "../../extensions/schedules/index.js";
import type { ExtensionFactory } from "../../extensions/types.js";
import { FileScheduleStore } from "../../queue/schedules/file-store.js";
import { LocalScheduleTimer } from "../../queue/schedules/local-timer.js";
import { ScheduleService } from "../../queue/schedules/schedule-service.js";
import type { ScheduleSettings } from "../../queue/schedules/settings.js";
import type { ScheduleTarget } from "../../queue/schedules/types.js";
import type { RunObserver, Runtime } from "../../queue/types.js";
import type { SchedulesConfig, SwitchboardConfig } from "../config/types.js";
import type { Logger } from "../log.js";
import { createScheduleExtension } from "./schedule-command.js";
import type { SharedRedis } from "./shared-redis.js";

export interface ScheduleWiring {
  /** `/schedule`; undefined when `schedules.enabled` is false. */
  extension: ExtensionFactory | undefined;
  /** What the runtime reports runs to (nothing happens before `bind`). */
  observer: RunObserver;
  /** Gives the service the runtime it delivers into. */
  bind(runtime: Runtime): void;
  /** A process that runs workers: keeps the config's schedules in step, then fires. */
  start(): Promise<void>;
  /** Stops firing and retrying (before the runtime stops). */
  stop(): Promise<void>;
}

/** The service's settings from the config's `schedules` section. */
function scheduleSettings(s: SchedulesConfig): ScheduleSettings {
  return {
    defaultTimeZone: s.timeZone,
    missed: s.missed,
    graceMs: s.graceMs,
    ifBusy: s.ifBusy,
    limits: { perThread: s.maxPerThread, perUser: s.maxPerUser },
    minIntervalMs: s.minIntervalMs,
    quietMarker: s.quietMarker,
    deliveryRetryMs: s.deliveryRetryMs,
  };
}

/** Where a thread key's messages go: its platform and channel, read off the key (docs/channels.md). */
function targetOfThread(threadKey: string): ScheduleTarget {
  const parts = threadKey.split(":");
  const platform = parts[0] as ScheduleTarget["platform"];
  const channelId =
    platform === "telegram"
      ? (parts[1] ?? "")
      : platform === "web"
        ? parts.slice(1).join(":")
        : (parts[2] ?? "");
  return { platform, threadKey, channelId, isDirect: platform === "discord" && parts[1] === "dm" };
}

export function wireSchedules(o: {
  config: SwitchboardConfig;
  shared: SharedRedis | undefined;
  logger: Logger;
  /** Receives the store's close: runs that end while the runtime stops still report into it. */
  closers: (() => Promise<unknown>)[];
  clock?: Clock;
}): ScheduleWiring {
  const cfg = o.config.schedules;
  const logger = o.logger.child({ component: "schedules" });
  let runtime: Runtime | undefined;
  const late = (): Runtime => {
    if (!runtime) throw new Error("the schedules' runtime is not bound yet");
    return runtime;
  };
  const clock = o.clock ?? systemClock;
  const onError = (err: unknown, context: string) => logger.error({ err, context }, "schedules error");
  const { shared } = o;
  const store = shared
    ? new shared.kit.RedisScheduleStore(shared.redis, o.config.runtime.keyPrefix)
    : new FileScheduleStore(join(o.config.runtime.dataDir, "schedules.json"));
  // Closed after the runtime stopped: the runs it finishes meanwhile still report their outcome.
  o.closers.push(async () => {
    await service.drain();
    await store.close();
  });
  const timer = shared
    ? new shared.kit.BullScheduleTimer({
        redis: shared.redis,
        prefix: shared.queuePrefix,
        onError,
        now: () => clock.now(),
      })
    : new LocalScheduleTimer(clock, onError);
  const service = new ScheduleService({
    store,
    timer,
    runtime: {
      deliver: (inbound, mode) => late().deliver(inbound, mode),
      status: (threadKey) => late().status(threadKey),
      control: (threadKey, command) => late().control(threadKey, command),
    },
    settings: scheduleSettings(cfg),
    clock,
    logger,
  });
  let started = false;
  return {
    extension: cfg.enabled ? createScheduleExtension(service) : undefined,
    observer: {
      runEnded: (report) => (runtime ? service.runEnded(report) : undefined),
      renderFinished: (threadKey, runId) => (runtime ? service.renderFinished(threadKey, runId) : undefined),
    },
    bind(r) {
      runtime = r;
    },
    async start() {
      if (!cfg.enabled) return;
      await syncConfigured(service, cfg, clock.now(), logger);
      await service.start();
      started = true;
    },
    async stop() {
      if (started) await service.close();
      else await timer.close();
    },
  };
}

/** Puts the config's schedules in the store (keeping each one's history) and drops those it no longer lists. */
async function syncConfigured(
  service: ScheduleService,
  cfg: SchedulesConfig,
  now: number,
  logger: Logger,
): Promise<void> {
  const rules = { defaultTimeZone: cfg.timeZone, minIntervalMs: cfg.minIntervalMs };
  for (const job of cfg.jobs) {
    const parsed = parseSchedule(`${job.schedule} ${job.prompt}`, now, rules);
    // The config check refused a job that does not parse; one that stopped parsing since (a
    // one-off whose time passed) is said and skipped.
    if (!parsed.ok) {
      logger.warn({ scheduleId: job.id, error: parsed.error }, "configured schedule skipped");
      continue;
    }
    await service.putConfigured(job.id, targetOfThread(job.thread), parsed.schedule);
  }
  await service.pruneConfigured(new Set(cfg.jobs.map((j) => j.id)));
}
