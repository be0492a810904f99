// A merge of raw-points files killed with SIGKILL anywhere (src/compact/points.ts), then run again:
// at each stop every trip's points are read as before (a copy read twice at most, which the route
// writer keeps once), every merged file on disk is known to the purge's index for each loaded file
// whose rows it holds, and the run that finishes leaves one file a settled date, nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { addDays, todayIn } from '../../src/time.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { startJob } from '../helpers/job-process.js';
import { readerView } from '../helpers/points-view.js';

let ws: Workspace;
const drivers = new Map<string, number>();
// the job runs on the machine's clock: dates it keeps (retention) and counts as settled
const today = todayIn('UTC', new Date());
const DATES = [2, 3, 4].map((d) => addDays(today, -d));
const FILES = 6;

const names = (day: string): string[] => {
  const dir = join(ws.paths.pointsDir, `trip_date=${day}`);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

/** Merged files on disk holding rows of a loaded file the index does not name for them. */
async function unindexed(): Promise<string[]> {
  const indexed = new Set(
    (
      await warehouseRows(
        ws.paths,
        "select trip_date::varchar || '/' || name || '/' || source_key as k from points_merged",
      )
    ).map((r) => String(r['k'])),
  );
  const missing: string[] = [];
  for (const day of DATES)
    for (const name of names(day).filter((n) => /^m\d+\.parquet$/.test(n))) {
      const file = join(ws.paths.pointsDir, `trip_date=${day}`, name);
      for (const r of await warehouseRows(ws.paths, `select distinct source_key from read_parquet('${file}')`))
        if (!indexed.has(`${day}/${name}/${String(r['source_key'])}`))
          missing.push(`${file}: ${String(r['source_key'])}`);
    }
  return missing;
}

/** load.js as a process, killed with SIGKILL at the `stopAt`-th change under the points folder (never, when 0). */
async function loadKilledAt(stopAt: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child, done } = startJob('load', ['--data-dir', ws.dir]);
  let seen = 0;
  const watcher = watch(ws.paths.pointsDir, { recursive: true }, () => {
    seen++;
    if (stopAt > 0 && seen === stopAt) child.kill('SIGKILL');
  });
  try {
    await done;
    return { code: child.exitCode, signal: child.signalCode };
  } finally {
    watcher.close();
  }
}

beforeAll(async () => {
  ws = await workspace('UTC');
  await new AppStore(ws.paths.appsFile).rotateKey(ws.appId);
  const passport = await PassportStore.open(ws.paths.passportFile);
  for (const [org, id] of await passport.ensureAccounts(ws.appId, ['k-1', 'k-2'])) drivers.set(org, id);
  passport.close();
  // FILES loads of a trip on each date: a points file a load and date
  for (let f = 0; f < FILES; f++) {
    const records = DATES.map((day, d) => {
      const org = `k-${((f + d) % 2) + 1}`;
      return tripRecord({
        appId: ws.appId,
        tripId: `t-${f}-${d}`,
        userId: drivers.get(org) as number,
        orgUserId: org,
        start: `${day}T${String(6 + f).padStart(2, '0')}:00:00Z`,
        seconds: 600,
      });
    });
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', `f-${f}.ndjson`), records)],
      compactMerges: 0,
    });
  }
});

afterAll(() => ws?.cleanup());

describe('a merge of raw-points files killed with SIGKILL', () => {
  it('reads every trip as before at each stop, never hides a loaded file from the index, and ends merged', async () => {
    for (const day of DATES) expect(names(day).length).toBe(FILES);
    const before = await readerView(ws);
    expect(Object.keys(before).length).toBe(DATES.length * FILES);
    let killed = 0;
    for (const stopAt of [2, 5, 8, 11, 15, 19, 24]) {
      const ran = await loadKilledAt(stopAt);
      if (ran.signal === 'SIGKILL') killed++;
      expect(await unindexed()).toEqual([]);
      expect(await readerView(ws, { once: true })).toEqual(before);
    }
    expect(killed).toBeGreaterThan(0);
    const finished = await loadKilledAt(0);
    expect(finished.code).toBe(0);
    for (const day of DATES) expect(names(day)).toHaveLength(1);
    for (const day of DATES) expect(names(day)[0]).toMatch(/^m\d+\.parquet$/);
    expect(await unindexed()).toEqual([]);
    expect(await readerView(ws)).toEqual(before);
    const leftovers = await warehouseRows(ws.paths, 'select count(*)::int as n from points_merge_garbage');
    expect(Number(leftovers[0]?.['n'])).toBe(0);
  });
});
