import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { splitKey } from './weighted-store.js';

type Callback = (error: Error | null, result: { current: number; ttl: number }) => void;
interface Store {
  incr(key: string, callback: Callback, timeWindow: number, max?: number): void;
}

// One round trip: add the cost to the bucket's counter, start its window on its first request
// (fixed windows, as the in-process store), and answer the count and the window's time left.
const INCR_BY_COST = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
if current == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}`;

export interface RedisCounting {
  redis: Redis;
  /** Where the limits count while Redis does not answer: this machine's store. */
  fallback: FastifyRateLimitStoreCtor;
  /** One line when the counting moves to the fallback and one when it moves back. */
  log?: (line: string) => void;
  /** Told each move: true to the fallback, false back to Redis (the API's metrics). */
  onMove?: (local: boolean) => void;
  prefix?: string;
}

/**
 * The rate limit's counters in Redis, for every API process on every machine, weighted as the
 * in-process store is (src/api/http/weighted-store.ts): the key generator's `<bucket>|<cost>` adds the
 * cost to the bucket's counter. @fastify/rate-limit's own Redis store counts 1 a request, which
 * would let a costly request through at the price of a cheap one.
 *
 * While Redis is unreachable the limits count in `fallback` (the machine's workers together), so
 * the service keeps answering and keeps a limit per machine rather than failing every request on
 * its rate limiter; the counting returns to Redis as soon as its connection is ready again.
 */
export function weightedRedisStore({
  redis,
  fallback,
  log = () => undefined,
  onMove,
  prefix = 'driving-rate:',
}: RedisCounting): FastifyRateLimitStoreCtor {
  let onFallback = false;
  const moveTo = (local: boolean, why: string): void => {
    if (local === onFallback) return;
    onFallback = local;
    onMove?.(local);
    log(
      local
        ? `serve: rate limits counted on this machine until Redis answers (${why})`
        : 'serve: rate limits counted in Redis again',
    );
  };
  redis.on('ready', () => moveTo(false, 'ready'));

  class WeightedRedisStore {
    private readonly local: Store;

    constructor(options: unknown) {
      this.local = new (fallback as unknown as new (o: unknown) => Store)(options);
    }

    incr(key: string, callback: Callback, timeWindow: number, max?: number): void {
      // no round trip to a connection known to be down: the request would wait for nothing
      if (redis.status !== 'ready') {
        moveTo(true, `connection ${redis.status}`);
        this.local.incr(key, callback, timeWindow, max);
        return;
      }
      const { bucket, cost } = splitKey(key);
      redis.eval(INCR_BY_COST, 1, `${prefix}${bucket}`, String(timeWindow), String(cost)).then(
        (result) => {
          const [current, ttl] = result as [number, number];
          callback(null, { current: Number(current), ttl: Number(ttl) });
        },
        (error: Error) => {
          moveTo(true, error.message);
          this.local.incr(key, callback, timeWindow, max);
        },
      );
    }

    child(): WeightedRedisStore {
      return this;
    }
  }
  return WeightedRedisStore as unknown as FastifyRateLimitStoreCtor;
}
