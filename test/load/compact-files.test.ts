// The published files merged in the background (src/compact/): after many small loads, each trip
// date's route files fall to a few (one for a settled date), every trip's route is served the same
// before and after, a purge finds its driver in the merged file through the index, a re-derive
// leaves no second copy, no serving file stays that no manifest names, and a merge killed
// anywhere and run again leaves a consistent folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { PassportStore } from '../../src/passport/store.js';
import { readRoute, routeFile } from '../../src/route/route-file.js';
import { manifestOf, warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { until } from '../helpers/serve-process.js';
import { routeFilesToMerge } from '../../src/compact/route-groups.js';

let ws: Workspace;
let key: string;
let api: Awaited<ReturnType<typeof createApi>>;
const now = new Date('2026-11-21T09:00:00Z');
const SETTLED = '2026-11-10';
const RECENT = '2026-11-20';
const drivers = new Map<string, number>();
/** Every trip loaded: its driver and id. */
const trips: { org: string; tripId: string }[] = [];
let n = 0;

const routeNames = (day: string): string[] => {
  const dir = join(ws.paths.routesDir, `trip_date=${day}`);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

/** One small load: a file of one trip (or the given ones), nothing merged before its publish. */
async function loadSmall(records: Record<string, unknown>[]): Promise<void> {
  n++;
  const file = writeNdjson(join(ws.dir, 'in', `batch-${n}.ndjson`), records);
  await runLoad({ dataDir: ws.dir, inputs: [file], now, compactMerges: 0 });
}

function trip(org: string, tripId: string, day: string, hour: number, speed = 12): Record<string, unknown> {
  if (!trips.some((t) => t.tripId === tripId)) trips.push({ org, tripId });
  return tripRecord({
    appId: ws.appId,
    tripId,
    userId: drivers.get(org) as number,
    orgUserId: org,
    start: `${day}T${String(hour).padStart(2, '0')}:00:00Z`,
    seconds: 90 + hour,
    speed: () => speed,
  });
}

/** Every trip's route as the API answers it (all points), by trip id. */
async function routes(): Promise<Record<string, { status: number; body: string }>> {
  const out: Record<string, { status: number; body: string }> = {};
  for (const { org, tripId } of trips) {
    const res = await api.app.inject({
      method: 'GET',
      url: `/v1/org-user/${org}/trip/${tripId}/route?tolerance=0`,
      headers: { authorization: `Bearer ${key}` },
    });
    out[tripId] = { status: res.statusCode, body: res.body };
  }
  return out;
}

/** Waits until the API serves the manifest's version (it has switched, and let go of the older slot). */
async function served(): Promise<void> {
  const version = manifestOf(ws.paths)?.version;
  await until(() => api.ctx.snapshots.manifest?.version === version, 'the API serves the new version');
}

/** The serving files on disk no manifest names. */
function unnamedPackFiles(): string[] {
  const manifest = manifestOf(ws.paths);
  const named = new Set(Object.values(manifest?.pack?.files ?? {}).flat());
  return readdirSync(ws.paths.publishedDir).filter(
    (name) => name.startsWith('serving-') && !named.has(name.replace(/\.extras$/, '')),
  );
}

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  for (const [org, id] of await passport.ensureAccounts(ws.appId, ['d-1', 'd-2', 'd-3'])) drivers.set(org, id);
  passport.close();
  // many small loads: a settled date and a recent one, one trip a load, and one trip sent again
  for (let i = 0; i < 6; i++) await loadSmall([trip(`d-${(i % 3) + 1}`, `s-${i}`, SETTLED, 6 + i)]);
  for (let i = 0; i < 5; i++) await loadSmall([trip(`d-${(i % 3) + 1}`, `r-${i}`, RECENT, 6 + i)]);
  await loadSmall([trip('d-1', 's-0', SETTLED, 6, 15)]);
  // the evening before in New York: found through the slot's key once the app's zone is that
  await loadSmall([trip('d-2', 'early', SETTLED, 3)]);
  api = await createApi({ dataDir: ws.dir, now: () => now, pollMs: 50 });
});

afterAll(async () => {
  await api?.close();
  ws?.cleanup();
});

describe('published files merged by date', () => {
  let before: Awaited<ReturnType<typeof routes>>;

  it('merges each date into few route files, and every route is served as before', async () => {
    expect(routeNames(SETTLED).length).toBe(8);
    expect(routeNames(RECENT).length).toBe(5);
    before = await routes();
    expect(Object.values(before).every((r) => r.status === 200)).toBe(true);
    // the trip sent again is served at its newer copy (15 m/s)
    expect(before['s-0']?.body).toContain('"speedsInKmh":[54');
    const manifest = manifestOf(ws.paths);
    // a load with nothing new: its step merges before its publish
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    expect(routeNames(SETTLED)).toEqual([`v${manifest?.version}.route`]);
    // the recent date's run of small files merged into its newest
    expect(routeNames(RECENT).length).toBe(1);
    await served();
    expect(await routes()).toEqual(before);
  });

  it('finds a trip whose version was merged away through the slot, when a zone change moved its day', async () => {
    const store = new AppStore(ws.paths.appsFile);
    const geometry = (body: string | undefined) => JSON.parse(body ?? '{}').route?.geometry;
    await store.setTimeZone(ws.appId, 'America/New_York');
    try {
      const moved = await routes();
      expect(moved['early']?.status).toBe(200);
      expect(JSON.parse(moved['early']?.body ?? '{}').route.properties.startTime).toMatch(/^2026-11-09 /);
      expect(geometry(moved['early']?.body)).toEqual(geometry(before['early']?.body));
    } finally {
      await store.setTimeZone(ws.appId, 'UTC');
    }
  });

  it('keeps the merged file indexed for every driver it holds, and a publish writes no file again for a merged version', async () => {
    const version = manifestOf(ws.paths)?.version as number;
    const indexed = await warehouseRows(
      ws.paths,
      `select distinct user_id from route_file_drivers where trip_date = '${SETTLED}' and version = ${version} order by 1`,
    );
    expect(indexed.map((r) => Number(r['user_id']))).toEqual([...drivers.values()].sort((a, b) => a - b));
    // the index forgot the removed files
    const stale = await warehouseRows(
      ws.paths,
      `select count(*)::int as n from route_file_drivers where trip_date = '${SETTLED}' and version <> ${version}`,
    );
    expect(Number(stale[0]?.['n'])).toBe(0);
    // a load with a full route upkeep (the nightly) writes every missing file: merged versions are not missing
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    expect(routeNames(SETTLED).length).toBe(1);
  });

  it('removes the serving files no manifest names once the API has switched', async () => {
    // a publish keeps the files of the pack it replaced (the API may still serve it): loads until
    // one merged layers, so that the pack it replaced named files the new one does not
    for (let i = 0; i < 12 && unnamedPackFiles().length === 0; i++)
      await loadSmall([trip('d-3', `r-${10 + i}`, RECENT, 12 + (i % 10))]);
    expect(unnamedPackFiles().length).toBeGreaterThan(0);
    await served();
    const result = await runLoad({ dataDir: ws.dir, inputs: [], now, compactMerges: 0 });
    expect(result.publish.published).toBe(false);
    expect(unnamedPackFiles()).toEqual([]);
    await served();
    expect(Object.values(await routes()).every((r) => r.status === 200)).toBe(true);
  });

  it('leaves no second copy of a route after a re-derive', async () => {
    await served();
    const answers = await routes();
    const version = manifestOf(ws.paths)?.version as number;
    const rederived = await runRederive({ dataDir: ws.dir, now });
    expect(rederived.totals.rederived).toBeGreaterThan(0);
    // every trip was written again by a newer version: its one file is of those
    expect(routeNames(SETTLED).length).toBe(1);
    expect(Number(routeNames(SETTLED)[0]?.slice(1, -6))).toBeGreaterThan(version);
    expect(routeNames(RECENT).length).toBeLessThanOrEqual(2);
    await served();
    expect(await routes()).toEqual(answers);
  });

  it('purges a driver out of the merged file the index names', async () => {
    const target = routeNames(SETTLED)[0] as string;
    const file = join(ws.paths.routesDir, `trip_date=${SETTLED}`, target);
    expect(readRoute(file, ws.appId, 's-1')).not.toBeNull();
    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: drivers.get('d-2') as number,
      orgUserId: 'd-2',
      requestedAt: now.toISOString(),
    });
    const result = await runLoad({ dataDir: ws.dir, inputs: [], now, compactMerges: 0 });
    expect(result.purged.users).toBe(1);
    expect(result.purged.routeFilesRewritten).toBeGreaterThan(0);
    // d-2's trips (s-1, s-4) are gone from the merged file; the others are still there
    expect(readRoute(routeFile(ws.paths.routesDir, SETTLED, Number(target.slice(1, -6))), ws.appId, 's-1')).toBeNull();
    expect(readRoute(file, ws.appId, 's-4')).toBeNull();
    expect(readRoute(file, ws.appId, 's-2')).not.toBeNull();
  });
});

describe('which route files of a date are merged', () => {
  const MiB = 1024 * 1024;
  const files = (...sizes: number[]) => sizes.map((bytes, i) => ({ version: i + 1, bytes }));

  it('merges a settled date whole, and nothing of a single file', () => {
    expect(routeFilesToMerge(files(100 * MiB, 1, 2), true)).toEqual([1, 2, 3]);
    expect(routeFilesToMerge(files(5), true)).toEqual([]);
  });

  it('merges a date still written size-tiered: small files of uneven sizes once there are four, a large one once the newer ones outweigh half of it', () => {
    expect(routeFilesToMerge(files(10, 3_000, 70, 1), false)).toEqual([1, 2, 3, 4]);
    expect(routeFilesToMerge(files(3_000, 70, 1), false)).toEqual([]);
    // a merged file of 64 MiB stays out while four of 1 MiB come after it
    expect(routeFilesToMerge(files(64 * MiB, MiB, MiB, MiB, MiB), false)).toEqual([2, 3, 4, 5]);
    expect(routeFilesToMerge(files(64 * MiB, 16 * MiB, 8 * MiB, 4 * MiB, 4 * MiB), false)).toEqual([1, 2, 3, 4, 5]);
  });
});
