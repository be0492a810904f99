// The raw-points files merged by trip date in the background (src/compact/points.ts): after many
// small loads each date's points files fall to one merged file; the points every reader takes for
// a version (the route writer's query) are the same before and after, and route files written
// again from the merged files are served as before; a re-derive after the merge gives the same
// points and leaves its superseded rows unread; a purge rewrites the merged file without the
// driver and keeps the others' rows; a file no ledger row names is left alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { appsOf } from '../../src/jobs/data-dir.js';
import { runLoad } from '../../src/jobs/load.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { PassportStore } from '../../src/passport/store.js';
import { query } from '../../src/db/sql.js';
import { openWarehouse } from '../../src/warehouse/warehouse.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { readerView } from '../helpers/points-view.js';

let ws: Workspace;
let key: string;
const now = new Date('2026-11-21T09:00:00Z');
const SETTLED = '2026-11-10';
const RECENT = '2026-11-20';
const drivers = new Map<string, number>();
const trips: { org: string; tripId: string }[] = [];
let n = 0;
/** A points file whose name no loaded file has: not the load's, never merged. */
const STRAY = 'f0123456789abcdef_0.parquet';

const pointsNames = (day: string): string[] => {
  const dir = join(ws.paths.pointsDir, `trip_date=${day}`);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

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

async function routes(): Promise<Record<string, string>> {
  const api = await createApi({ dataDir: ws.dir, now: () => now });
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

/** The trip ids and rows of every points file of a date. */
async function pointRows(day: string): Promise<{ tripId: string; n: number }[]> {
  const rows = await warehouseRows(
    ws.paths,
    `select trip_id, count(*)::int as n from read_parquet('${join(ws.paths.pointsDir, `trip_date=${day}`)}/*.parquet', union_by_name = true) group by 1 order by 1`,
  );
  return rows.map((r) => ({ tripId: String(r['trip_id']), n: Number(r['n']) }));
}

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  for (const [org, id] of await passport.ensureAccounts(ws.appId, ['d-1', 'd-2', 'd-3'])) drivers.set(org, id);
  passport.close();
  for (let i = 0; i < 6; i++) await loadSmall([trip(`d-${(i % 3) + 1}`, `s-${i}`, SETTLED, 6 + i)]);
  for (let i = 0; i < 5; i++) await loadSmall([trip(`d-${(i % 3) + 1}`, `r-${i}`, RECENT, 6 + i)]);
  // a trip sent again (its newer copy is the one read), and a file of both dates
  await loadSmall([trip('d-1', 's-0', SETTLED, 6, 15)]);
  await loadSmall([trip('d-2', 'both-s', SETTLED, 20), trip('d-3', 'both-r', RECENT, 20)]);
});

afterAll(() => ws?.cleanup());

describe('raw-points files merged by date', () => {
  let view: Record<string, string>;
  let served: Record<string, string>;

  it('merges each date into one file that every reader finds, and leaves a file of no loaded file alone', async () => {
    expect(pointsNames(SETTLED).length).toBe(8);
    expect(pointsNames(RECENT).length).toBe(6);
    copyFileSync(
      join(ws.paths.pointsDir, `trip_date=${SETTLED}`, pointsNames(SETTLED)[0] as string),
      join(ws.paths.pointsDir, `trip_date=${SETTLED}`, STRAY),
    );
    view = await readerView(ws);
    served = await routes();
    expect(Object.keys(view).length).toBe(trips.length);
    expect(Object.values(served).every((r) => r.startsWith('200 '))).toBe(true);
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    expect(pointsNames(SETTLED)).toEqual([STRAY, 'm1.parquet']);
    expect(pointsNames(RECENT)).toEqual(['m1.parquet']);
    rmSync(join(ws.paths.pointsDir, `trip_date=${SETTLED}`, STRAY));
    expect(await readerView(ws)).toEqual(view);
    // every row carries the loaded file it came from, and the index knows each for the merged file
    const keys = await warehouseRows(
      ws.paths,
      `select count(distinct source_key)::int as n, count(*) filter (where source_key is null)::int as missing from read_parquet('${join(ws.paths.pointsDir, `trip_date=${SETTLED}`, 'm1.parquet')}')`,
    );
    const indexed = await warehouseRows(
      ws.paths,
      `select count(*)::int as n from points_merged where trip_date = '${SETTLED}' and name = 'm1.parquet' and live`,
    );
    expect(Number(keys[0]?.['missing'])).toBe(0);
    expect(Number(indexed[0]?.['n'])).toBe(Number(keys[0]?.['n']));
  });

  it('writes route files again from the merged points as they were', async () => {
    for (const day of [SETTLED, RECENT]) rmSync(join(ws.paths.routesDir, `trip_date=${day}`), { recursive: true });
    await runLoad({ dataDir: ws.dir, inputs: [], now, compactMerges: 0 });
    expect(await routes()).toEqual(served);
  });

  it('re-derives after the merge to the same points, the superseded rows unread', async () => {
    const rederived = await runRederive({ dataDir: ws.dir, now });
    expect(rederived.totals.rederived).toBeGreaterThan(0);
    expect(await readerView(ws)).toEqual(view);
    expect(await routes()).toEqual(served);
    // the re-derive's own step merged its new files: the superseded rows were dropped, one copy of
    // each point is left, and none of them is read twice
    expect(pointsNames(SETTLED)).toEqual(['m2.parquet']);
    expect(await readerView(ws)).toEqual(view);
    const settled = await pointRows(SETTLED);
    const shown = Object.fromEntries(Object.entries(view).map(([t, rows]) => [t, Number(rows.split(' ')[0])]));
    for (const { tripId, n: rows } of settled) expect(rows).toBe(shown[tripId]);
  });

  it('purges a driver out of the merged file and keeps the others', async () => {
    const before = await pointRows(SETTLED);
    const gone = trips.filter((t) => t.org === 'd-2').map((t) => t.tripId);
    expect(before.some((r) => gone.includes(r.tripId))).toBe(true);
    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: drivers.get('d-2') as number,
      orgUserId: 'd-2',
      requestedAt: now.toISOString(),
    });
    const result = await runLoad({ dataDir: ws.dir, inputs: [], now, compactMerges: 0 });
    expect(result.purged.users).toBe(1);
    expect(result.purged.pointFilesRewritten).toBeGreaterThan(0);
    expect(await pointRows(SETTLED)).toEqual(before.filter((r) => !gone.includes(r.tripId)));
    // the merged file keeps its loaded files' keys: a reader still finds the others' points
    const after = await readerView(ws);
    for (const [tripId, rows] of Object.entries(view)) if (!gone.includes(tripId)) expect(after[tripId]).toBe(rows);
  });
});

describe('the purge index of a merged points file', () => {
  it('names every merged file on disk', async () => {
    const wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir));
    try {
      const known = await query(wh.conn, "select trip_date::varchar || '/' || name as f from points_merged");
      const names = new Set(known.map((r) => String(r['f'])));
      for (const day of [SETTLED, RECENT])
        for (const name of pointsNames(day)) expect(names.has(`${day}/${name}`)).toBe(true);
    } finally {
      wh.close();
    }
  });
});
