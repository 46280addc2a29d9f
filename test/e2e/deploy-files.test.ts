/**
 * The deployment files, checked offline (no Docker engine here): docker-compose.yml describes Redis
 * with AOF on a volume, a gateway and a scalable worker with health checks that follow the
 * configured port, and the container config the services share is a valid Switchboard config; when
 * `docker compose` is installed, it must accept the file. The Dockerfile builds dist/ in its own
 * stage, installs production packages only, runs the compiled code as a non-root user under tini,
 * and copies only paths that exist and that .dockerignore lets through.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseConfigText } from "../../src/gateway/config/index.js";

const repo = join(import.meta.dirname, "..", "..");
const read = (name: string) => readFileSync(join(repo, name), "utf8");

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  container_name?: string;
  configs?: { source: string; target: string }[];
  security_opt?: string[];
}

const compose = parse(read("docker-compose.yml"), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  configs: Record<string, { content: string }>;
};

describe("docker-compose.yml", () => {
  const { redis, gateway, worker } = compose.services;

  it("runs Redis with AOF persistence and no eviction on a named volume, health-checked", () => {
    expect(redis?.command?.join(" ")).toContain("--appendonly yes");
    expect(redis?.command?.join(" ")).toContain("--maxmemory-policy noeviction");
    const volume = redis?.volumes?.[0]?.split(":") ?? [];
    expect(volume[1]).toBe("/data");
    expect(compose.volumes).toHaveProperty(volume[0] as string);
    expect(redis?.healthcheck?.test).toEqual(["CMD", "redis-cli", "ping"]);
  });

  it("runs a gateway and a scalable worker from one image, health-checked on their port once Redis is healthy", () => {
    expect(gateway?.command).toEqual(["start", "--role", "gateway"]);
    expect(worker?.command).toEqual(["start", "--role", "worker"]);
    // One variable decides the port inside the container (PORT) and the one published on the host.
    const port = ["$", "{SWITCHBOARD_PORT:-8787}"].join(""); // the compose variable, written literally
    expect(gateway?.environment?.PORT).toBe(port);
    expect(gateway?.ports?.[0]).toBe(`${port}:${port}`);
    // `--scale worker=N` needs a worker without fixed names or host ports.
    expect(worker?.ports).toBeUndefined();
    expect(worker?.container_name).toBeUndefined();
    for (const s of [gateway, worker]) {
      expect(s?.build).toBe(".");
      expect(s?.environment?.REDIS_URL).toBe("redis://redis:6379");
      expect(s?.depends_on?.redis?.condition).toBe("service_healthy");
      // `switchboard health` reads the same config and PORT as `start`: no port is written twice.
      expect(s?.healthcheck?.test).toEqual(["CMD", "node", "bin/switchboard.js", "health"]);
      expect(s?.configs?.[0]?.target).toBe(s?.environment?.SWITCHBOARD_CONFIG);
    }
  });

  it("lets workers create the tool sandbox's namespaces without privileges or added capabilities", () => {
    expect(worker?.security_opt).toEqual(
      expect.arrayContaining(["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"]),
    );
    const raw = read("docker-compose.yml");
    expect(raw).not.toMatch(/privileged:\s*true|cap_add/);
  });

  it("gives the services a config that validates: all interfaces with the token, Redis from the environment", () => {
    const source = gateway?.configs?.[0]?.source as string;
    const text = compose.configs[source]?.content ?? "";
    const result = parseConfigText(text, {
      env: { REDIS_URL: "redis://redis:6379", SWITCHBOARD_HTTP_TOKEN: "0123456789abcdef0123", PORT: "8790" },
      baseDir: "/app",
    });
    expect(result.ok ? [] : result.issues).toEqual([]);
    if (!result.ok) return;
    expect(result.config.http.host).toBe("0.0.0.0");
    expect(result.config.http.port).toBe(8790);
    expect(result.config.runtime.redisUrl).toBe("redis://redis:6379");
    expect(worker?.volumes).toContain(`workspaces:${result.config.agent.workspaceDir}`);
  });
});

const composeVersion = spawnSync("docker", ["compose", "version"], { encoding: "utf8" });
const hasCompose = composeVersion.status === 0;

describe("docker compose", () => {
  it.skipIf(!hasCompose)(
    hasCompose
      ? "docker compose config accepts docker-compose.yml"
      : "docker compose config accepts docker-compose.yml (skipped: `docker compose` is not installed on this machine)",
    () => {
      const r = spawnSync(
        "docker",
        ["compose", "-f", join(repo, "docker-compose.yml"), "config", "--quiet"],
        {
          encoding: "utf8",
          env: { ...process.env, SWITCHBOARD_HTTP_TOKEN: "0123456789abcdef0123" },
        },
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    },
  );
});

describe("Dockerfile", () => {
  const text = read("Dockerfile");
  const lines = text.split("\n").filter((l) => !l.startsWith("#"));
  const ignored = read(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));

  it("builds dist/ in a stage of its own and ships production packages and the compiled code only", () => {
    const froms = lines.filter((l) => l.startsWith("FROM "));
    expect(froms.length).toBeGreaterThanOrEqual(3);
    for (const f of froms) expect(f).toMatch(/^FROM node:20-slim AS \w+$/);
    expect(text).toContain("RUN npm run build");
    expect(text).toContain("npm ci --omit=dev");
    expect(text).toContain("COPY --from=build /app/dist ./dist");
    // The runtime stage holds no TypeScript sources.
    const runtime = text.slice(text.indexOf("AS runtime"));
    expect(runtime).not.toMatch(/^COPY src/m);
  });

  it("runs the compiled bin as a non-root user under tini, health-checked with `switchboard health`", () => {
    const users = lines.filter((l) => l.startsWith("USER "));
    expect(users.at(-1)).toBe("USER node");
    expect(text).toMatch(/ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "bin\/switchboard\.js"\]/);
    expect(text).toContain("apt-get install -y --no-install-recommends tini");
    expect(text).toMatch(/HEALTHCHECK[^\n]*\n\s+CMD \["node", "bin\/switchboard\.js", "health"\]/);
  });

  it("installs bubblewrap for the tool sandbox", () => {
    expect(text).toMatch(/apt-get install -y --no-install-recommends [^\n]*\bbubblewrap\b/);
  });

  it("copies only paths that exist and that .dockerignore keeps", () => {
    const copies = lines
      .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(copies.length).toBeGreaterThan(0);
    for (const path of copies) {
      expect(existsSync(join(repo, path)), `${path} exists`).toBe(true);
      expect(ignored, `${path} is not ignored`).not.toContain(path);
    }
    for (const heavy of ["node_modules", "data", "test", ".git"]) expect(ignored).toContain(heavy);
  });
});
