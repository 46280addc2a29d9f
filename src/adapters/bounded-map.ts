/**
 * A Map that forgets its oldest entries beyond `max`, with an optional time-to-live (one for all
 * entries, or one per entry). Used for the adapters' small in-process memories (recent event ids,
 * thread lookups, user names), which must not grow with the lifetime of the process, and for the
 * memory of the embedded mode's file key-value store.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, { value: V; expires: number }>();

  constructor(
    private readonly max: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** Sets `key`, as the newest entry, for `ttlMs` (default: the map's time-to-live). */
  set(key: K, value: V, ttlMs = this.ttlMs): this {
    return this.setUntil(key, value, this.now() + ttlMs);
  }

  /** Sets `key`, as the newest entry, until the time `expires` (ms, the map's clock). */
  setUntil(key: K, value: V, expires: number): this {
    this.map.delete(key);
    this.map.set(key, { value, expires });
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  /** Entries held, expired ones not yet dropped included. */
  get size(): number {
    return this.map.size;
  }

  /** The unexpired entries, oldest first, each with the time it expires. */
  *live(): IterableIterator<[key: K, value: V, expires: number]> {
    const now = this.now();
    for (const [key, e] of this.map) if (e.expires > now) yield [key, e.value, e.expires];
  }
}
