import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { splitKey } from './weighted-store.js';

type Callback = (error: Error | null, result: { current: number; ttl: number }) => void;

// One round trip: add the cost to the bucket's counter, start its window on its first request
// (fixed windows, as the in-process store), and answer the count and the window's time left.
const INCR_BY_COST = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
if current == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}`;

/**
 * The rate limit's counters in Redis, for every API process on every machine, weighted as the
 * in-process store is (src/api/weighted-store.ts): the key generator's `<bucket>|<cost>` adds the
 * cost to the bucket's counter. @fastify/rate-limit's own Redis store counts 1 a request, which
 * would let a costly request through at the price of a cheap one.
 */
export function weightedRedisStore(redis: Redis, prefix = 'driving-rate:'): FastifyRateLimitStoreCtor {
  class WeightedRedisStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      const { bucket, cost } = splitKey(key);
      redis.eval(INCR_BY_COST, 1, `${prefix}${bucket}`, String(timeWindow), String(cost)).then(
        (result) => {
          const [current, ttl] = result as [number, number];
          callback(null, { current: Number(current), ttl: Number(ttl) });
        },
        (error: Error) => callback(error, { current: 0, ttl: 0 }),
      );
    }

    child(): WeightedRedisStore {
      return this;
    }
  }
  return WeightedRedisStore as unknown as FastifyRateLimitStoreCtor;
}
