/**
 * A worker process's view of shared things for the takeover tests: wrapped objects stop answering
 * once the worker "dies", at a chosen call or when a test says so, as for a process killed at that
 * instant.
 */

/** Which call a death happens at. */
export type CallMatch = (method: string, args: unknown[]) => boolean;

/** When a worker dies: at the first call that `at` matches, before or after it reaches its target. */
export interface Death {
  at: CallMatch;
  /** `after`: the call reaches the state or store (a command on the wire); its reply never comes. */
  after?: boolean;
}

/** A worker process's view of shared things; once dead, no call returns. */
export class Mortal {
  dead = false;
  private markDead!: () => void;
  /** Resolves when the worker dies. */
  readonly died = new Promise<void>((resolve) => {
    this.markDead = resolve;
  });
  private watchers: { match: CallMatch; resolve: () => void }[] = [];
  private readonly death: Death | undefined;

  /** `death`: the first matching call never returns (a bare match: it never reaches its target either). */
  constructor(death?: CallMatch | Death) {
    this.death = typeof death === "function" ? { at: death } : death;
  }

  kill(): void {
    this.dead = true;
    this.markDead();
  }

  /** Resolves when a matching call of the living worker has completed (its reply came back). */
  completed(match: CallMatch): Promise<void> {
    return new Promise((resolve) => this.watchers.push({ match, resolve }));
  }

  wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (obj, prop) => {
        const value: unknown = Reflect.get(obj, prop, obj);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const method = String(prop);
          if (this.dead) return new Promise(() => {});
          const dies = this.death?.at(method, args) ?? false;
          if (dies && !this.death?.after) {
            this.kill();
            return new Promise(() => {});
          }
          const out: unknown = value.apply(obj, args);
          if (dies) {
            this.kill();
            return new Promise(() => {});
          }
          const done = () => {
            for (const w of this.watchers.filter((x) => x.match(method, args))) {
              this.watchers.splice(this.watchers.indexOf(w), 1);
              w.resolve();
            }
          };
          if (out instanceof Promise) void out.then(done, done);
          else done();
          return out;
        };
      },
    });
  }
}
