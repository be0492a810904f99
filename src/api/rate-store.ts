import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { join } from 'node:path';
import { pickParams, stateSql } from '../state/db.js';
import { openWalFile } from '../state/sqlite.js';
import { splitKey } from './weighted-store.js';

type Incr = (err: Error | null, result: { current: number; ttl: number }) => void;

/** Where the API processes of one machine count requests for the rate limits. */
export const rateFileOf = (dataDir: string): string => join(dataDir, 'state', 'rate.sqlite');

/**
 * A store for @fastify/rate-limit that every worker of one machine shares, so the limit holds for
 * all of them together, whichever worker a client's connection lands on: one upsert a request in
 * a SQLite file (WAL, never fsynced: counts need not survive a crash). Several machines count in
 * Redis instead (`--redis-url`, the plugin's own store).
 */
export function sharedRateStore(file: string): FastifyRateLimitStoreCtor {
  const db = openWalFile(file, 5_000);
  db.pragma('synchronous = OFF');
  db.exec(stateSql('sqlite', 'rate_schema'));
  const count = db.prepare(stateSql('sqlite', 'rate_count'));
  const sweep = db.prepare(stateSql('sqlite', 'rate_sweep'));
  let sweptAt = 0;

  class SharedRateStore {
    // weighted as the in-process store: the key generator's `<bucket>|<cost>` adds the cost to the bucket
    incr(weighted: string, cb: Incr, timeWindow: number): void {
      const { bucket: key, cost } = splitKey(weighted);
      const now = Date.now();
      try {
        if (now - sweptAt > timeWindow) {
          sweptAt = now;
          sweep.run(pickParams(stateSql('sqlite', 'rate_sweep'), { window_ms: timeWindow, now_ms: now }));
        }
        const row = count.get(pickParams(stateSql('sqlite', 'rate_count'), { key, cost, now_ms: now, window_ms: timeWindow })) as { count: number; window_start_ms: number };
        cb(null, { current: Number(row.count), ttl: Math.max(0, Number(row.window_start_ms) + timeWindow - now) });
      } catch (error) {
        cb(error as Error, { current: 0, ttl: 0 });
      }
    }

    child(): SharedRateStore {
      return this;
    }
  }
  return SharedRateStore as unknown as FastifyRateLimitStoreCtor;
}
