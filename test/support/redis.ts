/**
 * Redis for tests: the server from the global setup, and a key prefix unique to the caller so
 * that test files running in parallel never see each other's keys or queues.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";

export function redisUrl(): string {
  return inject("redisUrl");
}

/** A fresh prefix such as `sbt:3f2a9c1e:`; use it for every key and queue name a test creates. */
export function uniquePrefix(label = "sbt"): string {
  return `${label}:${randomUUID().slice(0, 8)}:`;
}

/** A connection usable by BullMQ workers too (`maxRetriesPerRequest: null`). Close it in `afterAll`. */
export function connectRedis(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: null });
}
