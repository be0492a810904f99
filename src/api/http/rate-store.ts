import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type Database from 'better-sqlite3';
import { join } from 'node:path';
import { pickParams, stateSql } from '../../state/db.js';
import { openWalFile } from '../../state/sqlite.js';
import { splitKey } from './weighted-store.js';
import { isMachineError } from '../../machine-error.js';

type Incr = (err: Error | null, result: { current: number; ttl: number }) => void;

/** Where the API processes of one machine count requests for the rate limits. */
export const rateFileOf = (dataDir: string): string => join(dataDir, 'state', 'rate.sqlite');

/** How often a process adds what it counted to the shared file, at the latest. */
export const FLUSH_MS = 50;
/**
 * The share of a limit all processes together may leave uncounted in the file: each flushes a
 * bucket once it holds `FLUSH_SHARE / processes` of the bucket's limit unflushed, so the service
 * overshoots a limit by less than twice this (docs/api-limits.md, "Counting over workers").
 */
export const FLUSH_SHARE = 0.1;

export interface SharedRateOptions {
  /** How many processes count in the file (the workers of `serve.js --workers N`). */
  processes: number;
  flushMs?: number;
  now?: () => number;
}

/** One bucket as this process knows it. */
interface Bucket {
  /** The shared window's start and total at the last flush (this process's flushed counts included). */
  windowStart: number;
  total: number;
  /** Cost counted here since the last flush. */
  pending: number;
  window: number;
}

export interface SharedRateStoreCtor extends FastifyRateLimitStoreCtor {
  /** Adds every bucket's unflushed count to the file now (on close; tests). */
  flush(): void;
  close(): void;
}

/**
 * A store for @fastify/rate-limit that the workers of one machine share, so a limit holds for all
 * of them together, whichever worker a client's connection lands on. Each worker counts in memory
 * and adds its count to the bucket's row of a SQLite file (WAL, never fsynced: counts need not
 * survive a crash), reading the total back, every `flushMs` and at once when its unflushed count
 * reaches its share of the limit; it admits against the last total read plus its own unflushed
 * count. One write a request made the second worker's requests wait on the file's write lock
 * (SQLite's busy handler sleeps 1-10 ms) and cost more CPU than the first's; one write a bucket
 * every few dozen requests does not. Several machines count in Redis instead (`--redis-url`).
 */
export function sharedRateStore(file: string, options: SharedRateOptions): SharedRateStoreCtor {
  const db = openWalFile(file, 5_000);
  db.pragma('synchronous = OFF');
  db.exec(stateSql('sqlite', 'rate_schema'));
  const add = statement(db, 'rate_count');
  const sweep = statement(db, 'rate_sweep');
  const now = options.now ?? Date.now;
  const share = FLUSH_SHARE / Math.max(1, options.processes);
  const buckets = new Map<string, Bucket>();
  let sweptAt = 0;
  /** The longest window counted: a row whose start is further back than it belongs to no window. */
  let longest = 0;

  /** Buckets with a count not yet in the file. */
  const unflushed = new Set<string>();

  const sync = (key: string, bucket: Bucket, at: number): void => {
    const row = add.get({ key, cost: bucket.pending, now_ms: at, window_ms: bucket.window }) as {
      count: number;
      window_start_ms: number;
    };
    bucket.total = Number(row.count);
    bucket.windowStart = Number(row.window_start_ms);
    bucket.pending = 0;
    unflushed.delete(key);
  };

  // one transaction for all buckets: one write lock a process every flushMs, whatever the number of clients
  const flushAll = db.transaction((at: number, forget: boolean) => {
    for (const key of unflushed) {
      const bucket = buckets.get(key) as Bucket;
      // what was counted in a window that ended is moot
      if (bucket.windowStart + bucket.window <= at) {
        bucket.pending = 0;
        unflushed.delete(key);
      } else sync(key, bucket, at);
    }
    if (forget) {
      sweptAt = at;
      // a window that ended is read afresh at the bucket's next request
      for (const [key, bucket] of buckets) if (bucket.windowStart + bucket.window <= at) buckets.delete(key);
      sweep.run({ now_ms: at, window_ms: longest });
    }
  });
  const flush = (): void => {
    const at = now();
    const forget = longest > 0 && at - sweptAt > longest;
    // no transaction (and no write lock) in a tick with nothing to add or forget
    if ((unflushed.size > 0 || forget) && db.open) flushAll(at, forget);
  };
  const timer = setInterval(() => {
    try {
      flush();
    } catch {
      // the file busy beyond its timeout: the counts stay pending and go with the next flush
    }
  }, options.flushMs ?? FLUSH_MS);
  timer.unref();

  class SharedRateStore {
    static flush = flush;
    static close(): void {
      clearInterval(timer);
      flush();
      db.close();
    }

    // weighted as the in-process store: the key generator's `<bucket>|<cost>` adds the cost to the bucket
    incr(weighted: string, cb: Incr, timeWindow: number, max?: number): void {
      const { bucket: key, cost } = splitKey(weighted);
      const at = now();
      let bucket = buckets.get(key);
      try {
        const known = bucket !== undefined && bucket.windowStart + timeWindow > at;
        if (!bucket || !known) {
          // the first request of a window here: what the other processes counted in it is read now
          bucket = { windowStart: at, total: 0, pending: 0, window: timeWindow };
          buckets.set(key, bucket);
        }
        bucket.pending += cost;
        bucket.window = timeWindow;
        longest = Math.max(longest, timeWindow);
        if (!known || bucket.pending >= Math.max(1, Math.floor((max ?? 0) * share))) sync(key, bucket, at);
        else unflushed.add(key);
        cb(null, { current: bucket.total + bucket.pending, ttl: Math.max(0, bucket.windowStart + timeWindow - at) });
      } catch (error) {
        // a disk with no room for the counts: this process counts on alone until it has, and the
        // request is answered (reads go on while the disk is full); anything else is an error
        if (bucket && isMachineError(error)) {
          unflushed.add(key);
          cb(null, { current: bucket.total + bucket.pending, ttl: Math.max(0, bucket.windowStart + timeWindow - at) });
        } else cb(error as Error, { current: 0, ttl: 0 });
      }
    }

    child(): SharedRateStore {
      return this;
    }
  }
  return SharedRateStore as unknown as SharedRateStoreCtor;
}

/** A statement of sql/ops/state/ that takes the named parameters it uses out of a wider set. */
function statement(
  db: Database.Database,
  name: string,
): { get(params: Record<string, number | string>): unknown; run(params: Record<string, number | string>): void } {
  const sql = stateSql('sqlite', name);
  const prepared = db.prepare(sql);
  return {
    get: (params) => prepared.get(pickParams(sql, params)),
    run: (params) => void prepared.run(pickParams(sql, params)),
  };
}
