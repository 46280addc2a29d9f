// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references
/**
 * Where Redis is: one server (`redisUrl`, REDIS_URL) or a Redis Cluster (`redisCluster`,
 * REDIS_CLUSTER), the runs queue's prefix, and the replicas an inbox append waits for.
 */
import { describe, expect, it } from "vitest";
import { formatIssue, parseConfigText, redisTargetOf } from "../../src/gateway/config/index.js";

function load(yaml: string, env: Record<string, string> = {}) {
  return parseConfigText(yaml, { env, baseDir: "/srv/sb" });
}

function problems(yaml: string, env: Record<string, string> = {}): string[] {
  const r = load(yaml, env);
  return r.ok ? [] : r.issues.map((i) => formatIssue({ ...i, line: undefined }));
}

describe("runtime.redisCluster", () => {
  it("REDIS_CLUSTER names the cluster's seed nodes (comma-separated) and selects the cluster", () => {
    const r = load("", { REDIS_CLUSTER: "redis://10.0.0.1:7000, 10.0.0.2:7001,rediss://10.0.0.3:7002" });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.runtime.redisCluster).toEqual([
      "redis://10.0.0.1:7000",
      "10.0.0.2:7001",
      "rediss://10.0.0.3:7002",
    ]);
    expect(r.config.runtime.redisUrl).toBeUndefined();
    expect(redisTargetOf(r.config.runtime)).toEqual({ cluster: r.config.runtime.redisCluster });
  });

  it("takes a list in the file, or one ${VAR} that holds the list", () => {
    const listed = load("runtime:\n  redisCluster:\n    - 10.0.0.1:7000\n    - 10.0.0.2:7000\n");
    if (!listed.ok) throw new Error(listed.issues.map(formatIssue).join("\n"));
    expect(listed.config.runtime.redisCluster).toEqual(["10.0.0.1:7000", "10.0.0.2:7000"]);
    const fromVar = load("runtime:\n  redisCluster: ${SEEDS}\n", { SEEDS: "a:1 b:2" });
    if (!fromVar.ok) throw new Error(fromVar.issues.map(formatIssue).join("\n"));
    expect(fromVar.config.runtime.redisCluster).toEqual(["a:1", "b:2"]);
    // Empty means unset: the embedded runtime.
    const empty = load("runtime:\n  redisCluster: ${SEEDS:-}\n", {});
    if (!empty.ok) throw new Error(empty.issues.map(formatIssue).join("\n"));
    expect(redisTargetOf(empty.config.runtime)).toBeUndefined();
  });

  it("refuses a cluster and a single server together, naming both variables", () => {
    expect(problems("", { REDIS_URL: "redis://cache:6379", REDIS_CLUSTER: "cache:7000" })).toEqual([
      "runtime.redisCluster: is set together with runtime.redisUrl; use one: redisUrl for one Redis server, " +
        "redisCluster for a Redis Cluster (check REDIS_URL and REDIS_CLUSTER in the environment)",
    ]);
  });

  it("says what is wrong with a seed entry", () => {
    expect(
      problems("runtime:\n  redisCluster: [cache, 'redis://cache:7000/2', 'http://cache:7000']\n"),
    ).toEqual([
      'runtime.redisCluster[0]: "cache" names no port; write cache:<port> (a cluster node\'s port)',
      "runtime.redisCluster[1]: names a database; a cluster has only database 0, so drop the /<number>",
      'runtime.redisCluster[2]: "http:" is not redis: or rediss:',
    ]);
  });

  it("refuses a password written in the file, as for redisUrl", () => {
    const issues = problems("runtime:\n  redisCluster: ['redis://:hunter22@cache:7000']\n");
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^runtime\.redisCluster\[0\]: contains a password written in the file/);
    expect(issues[0]).not.toContain("hunter22");
  });

  it("on a cluster, needs a hash tag in runtime.queuePrefix, and warns about one in keyPrefix", () => {
    expect(problems("runtime:\n  redisCluster: [cache:7000]\n  queuePrefix: runs\n")).toEqual([
      'runtime.queuePrefix: "runs" has no hash tag; on a Redis Cluster the runs queue needs one (BullMQ keeps ' +
        "every key of a queue in one slot): write e.g. {sb-runs}, or leave it unset",
    ]);
    const tagged = load(
      "runtime:\n  redisCluster: [cache:7000]\n  queuePrefix: '{acme-runs}'\n  keyPrefix: '{acme}:'\n",
    );
    if (!tagged.ok) throw new Error(tagged.issues.map(formatIssue).join("\n"));
    expect(tagged.config.runtime.queuePrefix).toBe("{acme-runs}");
    expect(tagged.warnings).toEqual([
      'runtime.keyPrefix "{acme}:" contains a hash tag: on a Redis Cluster every key then lands in one slot, on ' +
        "one node, instead of each thread in a slot of its own",
    ]);
    // On one server any queue prefix works.
    expect(problems("runtime:\n  redisUrl: redis://cache:6379\n  queuePrefix: runs\n")).toEqual([]);
  });

  it("waits for no replica by default", () => {
    const r = load("", { REDIS_CLUSTER: "cache:7000" });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.runtime.waitReplicas).toBe(0);
    expect(r.config.runtime.waitReplicasTimeoutMs).toBe(500);
  });
});
