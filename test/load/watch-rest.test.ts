// The continuous load rests after each batch (src/jobs/watch.ts, `maxRestMs`, `busyPace`): files that
// arrive while it rests load together in the next batch, so a busy stream pays the per-batch work
// (a transaction, a publish, a snapshot switch in every API process) once for many files; the rest
// shrinks with the pace of arrivals, so a trickle is loaded at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { PassportStore } from '../../src/passport/store.js';
import { runWatch, type BatchOutcome } from '../../src/jobs/watch.js';

let ws: Workspace;
let ids: Map<string, number>;

beforeAll(async () => {
  ws = await workspace('UTC');
  const passport = await PassportStore.open(ws.paths.passportFile);
  ids = await passport.ensureAccounts(ws.appId, ['u-1']);
  passport.close();
});
afterAll(() => ws.cleanup());

function land(name: string, tripId: string, hour: number): void {
  const path = join(ws.paths.landingDir, name);
  writeNdjson(`${path}.tmp`, [
    tripRecord({
      appId: ws.appId,
      tripId,
      userId: ids.get('u-1') as number,
      orgUserId: 'u-1',
      start: `2026-11-20T${String(hour).padStart(2, '0')}:00:00Z`,
      seconds: 300,
    }),
  ]);
  renameSync(`${path}.tmp`, path);
}

/** Watches until every trip is loaded; lands `a` first, then `burst` files `b` as batch 1 ends and `c` `lateMs` later. */
async function watchThree(maxRestMs: number, busyPace: number, lateMs = 1_500, burst = 1): Promise<BatchOutcome[]> {
  const loaded: BatchOutcome[] = [];
  const stop = new AbortController();
  const tag = `r${maxRestMs}-${busyPace}-${lateMs}`;
  land(`${tag}-a.ndjson`, `${tag}-a`, 6);
  await runWatch({
    dataDir: ws.dir,
    pollMs: 50,
    gatherMs: 0,
    busyPace,
    maxRestMs,
    // partner files written aside and renamed: complete at once, so no quiet period (the rests alone are tested here)
    quietMs: 0,
    signal: stop.signal,
    onBatch: (batch) => {
      const files = batch.result ? batch.result.totals.files - batch.result.totals.filesSkipped : 0;
      if (files === 0) return;
      loaded.push(batch);
      if (loaded.length === 1) {
        for (let i = 0; i < burst; i++) land(`${tag}-b${i}.ndjson`, `${tag}-b${i}`, 7 + i);
        setTimeout(() => land(`${tag}-c.ndjson`, `${tag}-c`, 8), lateMs);
      }
      const trips = loaded.reduce((n, b) => n + (b.result?.totals.tripsLoaded ?? 0), 0);
      if (trips === 2 + burst) stop.abort();
    },
  });
  return loaded;
}

describe('load.js --watch rests after a batch', () => {
  it('loads what arrives while it rests as one batch', async () => {
    // any pace counts as busy here: the whole rest applies
    const batches = await watchThree(5_000, 0.001);
    expect(batches.map((b) => b.result?.totals.tripsLoaded)).toEqual([1, 2]);
    // the rest is counted in the lag: the file that waited longest waited through it
    expect(Math.max(...(batches[1] as BatchOutcome).lags)).toBeGreaterThan(1.5);
  });

  it('loads back to back with no rest: the late file makes a batch of its own', async () => {
    const batches = await watchThree(0, 0.001);
    expect(batches.map((b) => b.result?.totals.tripsLoaded)).toEqual([1, 1, 1]);
  });

  it('rests in proportion to the pace: a trickle far below the busy pace is loaded at once', async () => {
    const batches = await watchThree(5_000, 1_000);
    expect(batches.map((b) => b.result?.totals.tripsLoaded)).toEqual([1, 1, 1]);
  });

  it('counts the files waiting in the pace: a rest that began quiet grows with what arrives meanwhile', async () => {
    // after batch 1, one file in at least 5 s is at most a tenth of the busy pace (2 a second): a
    // rest of 1 s at most, had the four files waiting as it begins not counted, and `c` at 2 s would
    // load alone; with them, five files in 5 to 8 s (however long batch 1 took), a rest of 3.1 to 5 s,
    // and `c` joins them
    const batches = await watchThree(10_000, 2, 2_000, 4);
    expect(batches.map((b) => b.result?.totals.tripsLoaded)).toEqual([1, 5]);
  });
});
