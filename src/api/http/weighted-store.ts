/**
 * The rate limit's counters with weights: a store for `@fastify/rate-limit` (its `store` option)
 * that adds the request's cost instead of 1. The cost travels in the key the key generator makes,
 * `<bucket>|<cost>` (the library hands the store nothing else of the request); the counter is the
 * bucket's. Fixed windows, as the library's own LocalStore: a window starts with its bucket's first
 * request, and every attempt counts, refused ones included. A store shared by several processes
 * (Redis) keeps the same contract: INCRBY the bucket by the cost.
 */
type Callback = (error: Error | null, result: { current: number; ttl: number }) => void;

interface Counter {
  current: number;
  start: number;
}

/** `<bucket>|<cost>` */
export const weightedKey = (bucket: string, cost: number): string => `${bucket}|${cost}`;

export function splitKey(key: string): { bucket: string; cost: number } {
  const at = key.lastIndexOf('|');
  const cost = Number(key.slice(at + 1));
  return at < 0 || !Number.isSafeInteger(cost) || cost < 1
    ? { bucket: key, cost: 1 }
    : { bucket: key.slice(0, at), cost };
}

export class WeightedStore {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly options: { cache?: number; now?: () => number } = {}) {}

  incr(key: string, callback: Callback, timeWindow: number): void {
    const { bucket, cost } = splitKey(key);
    const now = (this.options.now ?? Date.now)();
    let counter = this.counters.get(bucket);
    if (!counter || counter.start + timeWindow <= now) {
      counter = { current: 0, start: now };
      this.evict();
    }
    // re-inserted: the map's order is then least recently counted first, for eviction
    this.counters.delete(bucket);
    this.counters.set(bucket, counter);
    counter.current += cost;
    callback(null, { current: counter.current, ttl: counter.start + timeWindow - now });
  }

  read(key: string, callback: Callback, timeWindow: number): void {
    const { bucket } = splitKey(key);
    const now = (this.options.now ?? Date.now)();
    const counter = this.counters.get(bucket);
    if (!counter || counter.start + timeWindow <= now) callback(null, { current: 0, ttl: 0 });
    else callback(null, { current: counter.current, ttl: counter.start + timeWindow - now });
  }

  /** The same counters for a route with its own settings (the library's contract). */
  child(): WeightedStore {
    return this;
  }

  private evict(): void {
    const limit = this.options.cache ?? 100_000;
    while (this.counters.size >= limit) this.counters.delete(this.counters.keys().next().value as string);
  }
}
