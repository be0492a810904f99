// The rate store the workers of one machine share (src/api/http/rate-store.ts): two stores on one SQLite
// file stand for two workers. Each counts in memory and flushes a bucket to the file once it holds
// its share of the limit, so the pair admits at least the limit and at most the limit plus one share
// each (plus one request's cost) beyond it: checked against an exact count, by requests, not time.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLUSH_SHARE, sharedRateStore, type SharedRateStoreCtor } from '../../src/api/http/rate-store.js';
import { weightedKey } from '../../src/api/http/weighted-store.js';

const WINDOW = 1_000;
let dir = '';
let opened: SharedRateStoreCtor[] = [];

afterEach(() => {
  for (const store of opened) store.close();
  opened = [];
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `processes` stores on one file, on one clock the test moves; no timed flush (counts decide). */
function workers(processes: number, clock: { now: number }) {
  dir = mkdtempSync(join(tmpdir(), 'rate-store-'));
  const file = join(dir, 'rate.sqlite');
  const ctors = Array.from({ length: processes }, () =>
    sharedRateStore(file, { processes, flushMs: 3_600_000, now: () => clock.now }),
  );
  opened = ctors;
  const stores = ctors.map(
    (Ctor) =>
      new Ctor() as unknown as {
        incr(
          key: string,
          cb: (e: Error | null, r: { current: number; ttl: number }) => void,
          window: number,
          max: number,
        ): void;
      },
  );
  const incr = (worker: number, bucket: string, cost: number, max: number): { current: number; ttl: number } => {
    let out = { current: -1, ttl: -1 };
    stores[worker]?.incr(
      weightedKey(bucket, cost),
      (error, result) => {
        if (error) throw error;
        out = result;
      },
      WINDOW,
      max,
    );
    return out;
  };
  return { file, ctors, incr };
}

/** A seeded sequence in [0, 1) (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('the shared rate store over 2 workers', () => {
  it('admits a burst spread over both at least up to the limit and within 20% over it, whatever the interleaving', () => {
    const limit = 200;
    for (const seed of [1, 2, 3, 4, 5]) {
      const clock = { now: 1_000_000 };
      const { incr, ctors } = workers(2, clock);
      const next = random(seed);
      let admittedUnits = 0;
      let exactUnits = 0;
      let counted = 0;
      for (let i = 0; i < 600; i++) {
        // runs of one worker of random length, as connections land on one worker then the other
        const worker = next() < (seed % 2 === 0 ? 0.5 : 0.9) ? i % 2 : 0;
        const cost = seed === 5 ? 1 + Math.floor(next() * 12) : 1;
        counted += cost;
        // the exact rule: admitted while everything counted so far, this request included, is within the limit
        if (counted <= limit) exactUnits += cost;
        if (incr(worker, 'app:a', cost, limit).current <= limit) admittedUnits += cost;
      }
      // never below the limit (a worker never counts more than was counted) ...
      expect(admittedUnits, `seed ${seed}`).toBeGreaterThanOrEqual(exactUnits);
      // ... and over it by at most each worker's share, plus a request's cost: here 10% with 2 workers
      const share = Math.floor((limit * FLUSH_SHARE) / 2);
      expect(admittedUnits, `seed ${seed}`).toBeLessThanOrEqual(limit + 2 * (share + 11));
      expect(admittedUnits, `seed ${seed}`).toBeLessThanOrEqual(limit * 1.2);
      for (const store of ctors) store.close();
      opened = [];
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves in the file every unit counted once both flush', () => {
    const clock = { now: 1_000_000 };
    const { incr, ctors, file } = workers(2, clock);
    let total = 0;
    for (let i = 0; i < 97; i++) {
      const cost = 1 + (i % 5);
      total += cost;
      incr(i % 3 === 0 ? 1 : 0, 'app:b', cost, 1_000);
    }
    for (const store of ctors) store.flush();
    const row = new Database(file, { readonly: true })
      .prepare('select count from rate_counts where key = ?')
      .get('app:b') as { count: number };
    expect(row.count).toBe(total);
  });

  it('counts a first request of a window exactly: one worker sees what the other counted', () => {
    const clock = { now: 1_000_000 };
    const { incr } = workers(2, clock);
    // a limit of 10 over 2 workers: each flushes at every request (a share under 1 is 1)
    for (let i = 0; i < 7; i++) incr(0, 'token:t', 1, 10);
    expect(incr(1, 'token:t', 1, 10).current).toBe(8);
    expect(incr(0, 'token:t', 1, 10).current).toBe(9);
  });

  it('starts a bucket afresh once its window ended, with the time left in the current one', () => {
    const clock = { now: 1_000_000 };
    const { incr } = workers(2, clock);
    for (let i = 0; i < 30; i++) incr(i % 2, 'app:c', 1, 20);
    clock.now += 400;
    expect(incr(0, 'app:c', 1, 20).ttl).toBe(600);
    clock.now += WINDOW;
    expect(incr(1, 'app:c', 3, 20)).toEqual({ current: 3, ttl: WINDOW });
    expect(incr(0, 'app:c', 1, 20).current).toBe(4);
  });
});
