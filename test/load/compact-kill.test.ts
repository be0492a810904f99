// A merge of route files killed with SIGKILL anywhere (src/compact/routes.ts), then run again: every
// trip's route is served as before at each stop, every file that lists a driver's trip is one the
// purge's index names for that driver (or does not know), and the run that finishes leaves one
// file a settled date.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { readRoute } from '../../src/route/route-file.js';
import { addDays, todayIn } from '../../src/time.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { startJob } from '../helpers/job-process.js';

let ws: Workspace;
let key: string;
const drivers = new Map<string, number>();
const trips: { org: string; tripId: string }[] = [];
// the job runs on the machine's clock: dates it keeps (retention) and counts as settled
const today = todayIn('UTC', new Date());
const DATES = [2, 3, 4, 5].map((d) => addDays(today, -d));
const FILES = 6;

const routeFiles = (): { day: string; version: number; path: string }[] =>
  DATES.flatMap((day) => {
    const dir = join(ws.paths.routesDir, `trip_date=${day}`);
    return (existsSync(dir) ? readdirSync(dir) : []).flatMap((name) => {
      const version = /^v(\d+)\.route$/.exec(name)?.[1];
      return version === undefined ? [] : [{ day, version: Number(version), path: join(dir, name) }];
    });
  });

/** Every trip's route as the API answers it, from an API started on the folder as it is now. */
async function answers(): Promise<Record<string, string>> {
  const api = await createApi({ dataDir: ws.dir });
  try {
    const out: Record<string, string> = {};
    for (const { org, tripId } of trips) {
      const res = await api.app.inject({
        method: 'GET',
        url: `/v1/org-user/${org}/trip/${tripId}/route?tolerance=0`,
        headers: { authorization: `Bearer ${key}` },
      });
      out[tripId] = `${res.statusCode} ${res.body}`;
    }
    return out;
  } finally {
    await api.close();
  }
}

/** The files that list a trip of a driver the purge's index does not name for that file (while it knows the file). */
async function unindexedHolders(): Promise<string[]> {
  const rows = await warehouseRows(
    ws.paths,
    'select trip_date::varchar as d, version, user_id from route_file_drivers',
  );
  const index = new Map<string, Set<number>>();
  for (const r of rows) {
    const k = `${String(r['d'])}/${Number(r['version'])}`;
    index.set(k, (index.get(k) ?? new Set()).add(Number(r['user_id'])));
  }
  const missing: string[] = [];
  for (const file of routeFiles()) {
    const known = index.get(`${file.day}/${file.version}`);
    if (!known) continue;
    for (const { org, tripId } of trips)
      if (readRoute(file.path, ws.appId, tripId) && !known.has(drivers.get(org) as number))
        missing.push(`${file.path}: ${tripId}`);
  }
  return missing;
}

/** load.js as a process, killed with SIGKILL at the `stopAt`-th change under the route folder (never, when 0). */
async function loadKilledAt(stopAt: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child, done } = startJob('load', ['--data-dir', ws.dir]);
  let seen = 0;
  const watcher = watch(ws.paths.routesDir, { recursive: true }, () => {
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
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  for (const [org, id] of await passport.ensureAccounts(ws.appId, ['k-1', 'k-2'])) drivers.set(org, id);
  passport.close();
  // FILES loads of a trip on each date: a route file a load and date
  for (let f = 0; f < FILES; f++) {
    const records = DATES.map((day, d) => {
      const org = `k-${((f + d) % 2) + 1}`;
      const tripId = `t-${f}-${d}`;
      trips.push({ org, tripId });
      return tripRecord({
        appId: ws.appId,
        tripId,
        userId: drivers.get(org) as number,
        orgUserId: org,
        start: `${day}T${String(6 + f).padStart(2, '0')}:00:00Z`,
        seconds: 1200,
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

describe('a merge of route files killed with SIGKILL', () => {
  it('serves every route as before at each stop, never hides a driver from the index, and ends merged', async () => {
    expect(routeFiles().length).toBe(DATES.length * FILES);
    const before = await answers();
    expect(Object.values(before).every((a) => a.startsWith('200 '))).toBe(true);
    let killed = 0;
    for (const stopAt of [2, 6, 9, 12, 14, 17]) {
      const ran = await loadKilledAt(stopAt);
      if (ran.signal === 'SIGKILL') killed++;
      expect(await unindexedHolders()).toEqual([]);
      expect(await answers()).toEqual(before);
    }
    expect(killed).toBeGreaterThan(0);
    const finished = await loadKilledAt(0);
    expect(finished.code).toBe(0);
    expect(routeFiles().length).toBe(DATES.length);
    expect(await unindexedHolders()).toEqual([]);
    expect(await answers()).toEqual(before);
    // nothing a killed merge left behind stays
    for (const day of DATES)
      expect(readdirSync(join(ws.paths.routesDir, `trip_date=${day}`)).filter((n) => !/^v\d+\.route$/.test(n))).toEqual(
        [],
      );
  });
});
