// A driver moved between cells (docs/operating.md, Cells: "Moving a driver"): two job machines
// with a warehouse each and one PostgreSQL, an API machine following both, and a reference data
// folder holding every record in one warehouse. `cells.js move` on cell a sends the driver's rows
// to cell b; b's load takes them in; a's purge erases the driver once the grace has passed. All
// the while the API answers the driver exactly as the one warehouse does; afterwards b alone holds
// it (a's warehouse, slots, raw points, route files and landing archive hold none of it), and a
// new upload of the driver is loaded in b.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { AppStore } from '../../src/apps/store.js';
import { cellFolder } from '../../src/cell.js';
import { pathsFor } from '../../src/data-folder.js';
import { openDatabase } from '../../src/db/open.js';
import { listValue } from '../../src/db/duckdb.js';
import { query } from '../../src/db/sql.js';
import { closeUploadQueues } from '../../src/intake/upload-queue.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates, openState } from '../../src/state/open.js';
import { filesUnder } from '../helpers/files.js';
import { runJobProcess } from '../helpers/job-process.js';
import { oneFile } from '../helpers/one-file.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { until, type ServeProcess } from '../helpers/serve-process.js';
import { tripRecord } from '../helpers/trips.js';
import { manifestOf, publishedRows, warehouseRows } from '../helpers/workspace.js';
import { copyState, cellsAndReferenceApis } from '../helpers/cells.js';

const SCORE_DATE = '2026-11-21';
const UNSHARED = new Set(['requestId', 'nextCursor', 'evaluationTime']);
const RANGE = 'startTime=2026-11-01&endTime=2026-11-30';

let server: PgServer;
let url: string;
let refUrl: string;
let appId: string;
let apiKey: string;
const dirs: string[] = [];
const serves: ServeProcess[] = [];
let cellA: string;
let cellB: string;
let ref: string;
let apiDir: string;
let api: ServeProcess;
let one: ServeProcess;
let db: pg.Client;
/** The driver moved: its orgUserId, platform user id and trip ids. */
let driver: string;
let userId: number;
let trips: string[] = [];
/** Drivers given records the reference does not have. */
const extra = new Set<string>();

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-move-${name}-`));
  dirs.push(dir);
  return dir;
};

async function job(name: string, dataDir: string, dbUrl: string, args: string[], env: Record<string, string> = {}) {
  const ran = await runJobProcess(name, ['--data-dir', dataDir, ...args], {
    DATABASE_URL: dbUrl,
    DRIVING_LOAD_CONCURRENCY: '1',
    ...env,
  });
  if (ran.code !== 0) throw new Error(`${name} ${args.join(' ')} exited ${ran.code}: ${ran.stderr.slice(-3000)}`);
  return ran;
}

async function get(base: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body: JSON.parse(JSON.stringify(body, (k, v) => (UNSHARED.has(k) ? undefined : v))) };
}

const pathsOf = (who: string, tripIds: string[]): string[] => [
  `/v1/org-user/${who}/trips?${RANGE}&limit=50`,
  `/v1/org-user/${who}/statistics?type=day&${RANGE}`,
  `/v1/org-user/${who}/statistics?type=month&${RANGE}`,
  `/v1/org-user/${who}/safety-score?interval=30`,
  `/v1/org-user/${who}/safety-score/history?interval=30&startTime=2026-11-01&endTime=2026-11-30`,
  ...tripIds.slice(0, 2).flatMap((t) => [`/v1/org-user/${who}/trip/${t}`, `/v1/org-user/${who}/trip/${t}/route`]),
];

/** Compares the API's answers with the one warehouse's for `who`; the paths that differ. */
async function differences(who: string, tripIds: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of pathsOf(who, tripIds)) {
    const [want, got] = await Promise.all([get(one.url, path), get(api.url, path)]);
    if (JSON.stringify(got) !== JSON.stringify(want))
      out.push(`${path}: ${JSON.stringify(got).slice(0, 300)} != ${JSON.stringify(want).slice(0, 300)}`);
  }
  return out;
}

/** The rows of the driver in a warehouse's tables that hold drivers' rows. */
async function warehouseHolds(dir: string, user: number): Promise<number> {
  const tables = ['trips', 'trip_events', 'stats_daily', 'safety_scores'];
  let n = 0;
  for (const t of tables) {
    const [row] = await warehouseRows(pathsFor(dir), `select count(*)::int as n from ${t} where user_id = ${user}`);
    n += Number(row?.['n'] ?? 0);
  }
  return n;
}

/** Rows of the driver's trips in every slot file of a data folder. */
async function slotsHold(dir: string, tripIds: string[]): Promise<number> {
  const published = pathsFor(dir).publishedDir;
  let n = 0;
  for (const name of readdirSync(published).filter((f) => /^slot-[ab]\.duckdb$/.test(f))) {
    const conn = await openDatabase(join(published, name), { readOnly: true });
    try {
      const [row] = await query(
        conn.connection,
        'select count(*)::int as n from trips where list_contains($ids, trip_id)',
        {
          ids: listValue(tripIds),
        },
      );
      n += Number(row?.['n'] ?? 0);
    } finally {
      conn.close();
    }
  }
  return n;
}

/** The bulk export's trips of one driver from a server, by tripId (each once, if streamed once). */
async function exported(base: string, user: number): Promise<string[]> {
  const res = await fetch(`${base}/v1/exports/trips`, {
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/x-ndjson' },
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { userId: number; tripId: string })
    .filter((t) => Number(t.userId) === user)
    .map((t) => t.tripId)
    .sort();
}

/** Files under `dir` whose bytes (gunzipped where gzip) hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  return filesUnder(dir).filter((f) => {
    let bytes = readFileSync(f);
    if (bytes[0] === 0x1f && bytes[1] === 0x8b)
      try {
        bytes = gunzipSync(bytes);
      } catch {}
    return bytes.includes(needle);
  });
}

/** Raw points of the trips in a data folder's points files. */
async function pointsHeld(dir: string, tripIds: string[]): Promise<number> {
  const files = filesUnder(pathsFor(dir).pointsDir).filter((f) => f.endsWith('.parquet'));
  if (files.length === 0) return 0;
  const conn = await openDatabase(':memory:');
  try {
    const [row] = await query(
      conn.connection,
      'select count(*)::int as n from read_parquet($files, union_by_name = true) where list_contains($ids, trip_id)',
      { files: listValue(files), ids: listValue(tripIds) },
    );
    return Number(row?.['n'] ?? 0);
  } finally {
    conn.close();
  }
}

/** Drivers per window and stored score, from rows that are one driver each or carry `drivers`. */
function counted(rows: Record<string, unknown>[]): string[] {
  const n = new Map<string, number>();
  for (const r of rows) {
    const key = `${Number(r['interval_days'])}|${Number(r['safety_score'])}`;
    n.set(key, (n.get(key) ?? 0) + Number(r['drivers'] ?? 1));
  }
  return [...n].map(([k, v]) => `${k}|${v}`).sort();
}

/** Two `counted` lists added together. */
function merged(a: string[], b: string[]): string[] {
  return counted(
    [...a, ...b].map((line) => {
      const [interval_days, safety_score, drivers] = line.split('|');
      return { interval_days, safety_score, drivers };
    }),
  );
}

beforeAll(async () => {
  server = await startPostgres();
  url = await server.database();
  refUrl = await server.database();
  cellA = folder('a');
  cellB = folder('b');
  ref = folder('ref');
  const added = await new AppStore({ dataDir: cellA, databaseUrl: url }).add({
    name: 'Fleet',
    timeZone: 'America/New_York',
  });
  appId = added.appId;
  apiKey = added.apiKey;
  await job('load', cellA, url, ['--cell', 'a']);
  await job('load', cellB, url, ['--cell', 'b']);
  const gen = folder('gen');
  await job('generate', cellA, url, [
    '--cell',
    'a',
    '--users',
    '8',
    '--days',
    '4',
    '--end-date',
    '2026-11-20',
    '--seed',
    '5',
    '--out',
    gen,
  ]);
  const file = oneFile(gen);
  await openState({ dataDir: ref, databaseUrl: refUrl });
  await copyState(url, refUrl);
  mkdirSync(pathsFor(ref).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(ref).landingDir, 'partner.ndjson'));
  await job('load', ref, refUrl, []);
  await job('score', ref, refUrl, ['--date', SCORE_DATE]);
  mkdirSync(pathsFor(cellA).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(cellA).landingDir, 'partner.ndjson'));
  await job('load', cellA, url, ['--cell', 'a']);
  await job('load', cellB, url, ['--cell', 'b']);
  await job('score', cellA, url, ['--cell', 'a', '--date', SCORE_DATE]);
  await job('score', cellB, url, ['--cell', 'b', '--date', SCORE_DATE]);
  await job('load', cellA, url, ['--cell', 'a']);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  // the first driver of cell a
  const [moving] = (
    await db.query(
      `select a.org_user_id, a.platform_user_id from accounts a
       join driver_cells d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
       where a.app_id = $1 and d.cell = 'a' order by a.org_user_id`,
      [appId],
    )
  ).rows as { org_user_id: string; platform_user_id: string }[];
  if (!moving) throw new Error('no driver in cell a');
  driver = moving.org_user_id;
  userId = Number(moving.platform_user_id);
  trips = (await publishedRows(pathsFor(cellA), 'trips', 'trip_id', []))
    .filter((r) => Number(r['user_id']) === userId)
    .map((r) => String(r['trip_id']));
  apiDir = folder('api');
  ({ api, one } = await cellsAndReferenceApis(apiDir, { a: cellA, b: cellB }, url, ref, refUrl));
  serves.push(api, one);
}, 600_000);

afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(serves.map((s) => s.exited));
  await db?.end();
  await closeUploadQueues();
  await closeStates();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a driver moved from one cell to another', () => {
  it('is answered as one warehouse answers it throughout, and ends in the target cell alone', async () => {
    expect(trips.length).toBeGreaterThan(0);
    expect(await differences(driver, trips)).toEqual([]);
    // the source holds the driver everywhere before the move: what the checks below look for is there
    expect(filesHolding(join(pathsFor(cellA).landingDir, 'loaded'), trips[0] as string).length).toBeGreaterThan(0);
    expect(await pointsHeld(cellA, trips)).toBeGreaterThan(0);

    // the API is asked about the driver the whole time, and must answer as the one warehouse does
    let polling = true;
    let compared = 0;
    const seen: string[] = [];
    const poller = (async () => {
      while (polling) {
        seen.push(...(await differences(driver, trips)));
        compared++;
      }
    })();
    try {
      const moved = await job('cells', cellA, url, [
        'move',
        '--cell',
        'a',
        '--org-user',
        driver,
        '--to',
        'b',
        '--json',
      ]);
      const result = JSON.parse(moved.stdout) as { ok: boolean; to: string; rows: Record<string, number> };
      expect(result).toMatchObject({ ok: true, to: 'b' });
      expect(result.rows['trips']).toBe(trips.length);
      expect(result.rows['points']).toBeGreaterThan(0);
      const cellOf = async () =>
        (await db.query('select cell from driver_cells where app_id = $1 and platform_user_id = $2', [appId, userId]))
          .rows[0]?.cell;
      expect(await cellOf()).toBe('b');
      const moveRow = async () =>
        (await db.query('select * from driver_moves where app_id = $1 and platform_user_id = $2', [appId, userId]))
          .rows[0] as { from_cell: string; arrived_version: number | null } | undefined;
      expect(await moveRow()).toMatchObject({ from_cell: 'a', arrived_version: null });

      // the bulk export streams the driver once, from where it is answered
      const all = [...trips].sort();
      expect(await exported(api.url, userId)).toEqual(all);
      // the source, before the package has arrived, erases nothing
      await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1ms' });
      expect(await warehouseHolds(cellA, userId)).toBeGreaterThan(0);

      // the target takes the package in and publishes it
      const loaded = await job('load', cellB, url, ['--cell', 'b']);
      expect(loaded.stderr).toContain(`${trips.length} trip(s) imported`);
      const arrived = Number((await moveRow())?.arrived_version);
      expect(arrived).toBeGreaterThan(0);
      expect(readdirSync(pathsFor(cellB).landingDir).filter((n) => n.endsWith('.cellmove'))).toEqual([]);
      // the API machine's copy of b catches up with that publish
      await until(
        () => Number(manifestOf(pathsFor(cellFolder(apiDir, 'b')))?.version ?? 0) >= arrived,
        "the API machine's copy of cell b serving the moved driver",
        60_000,
      );
      const before = compared;
      await until(() => compared > before + 1, 'the driver asked for from the target cell');
      // both cells hold the driver now: still streamed once
      expect(await exported(api.url, userId)).toEqual(all);

      // within the grace the source keeps its copy
      await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1h' });
      expect(await warehouseHolds(cellA, userId)).toBeGreaterThan(0);
      // past it, the source erases the driver and the move is over
      const erased = await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1ms' });
      expect(erased.stderr).toContain('1 driver(s) moved to another cell');
      expect(await moveRow()).toBeUndefined();
      await until(
        () =>
          Number(manifestOf(pathsFor(cellFolder(apiDir, 'a')))?.version ?? 0) >=
          Number(manifestOf(pathsFor(cellA))?.version),
        "the API machine's copy of cell a without the driver",
        60_000,
      );
      const after = compared;
      await until(() => compared > after + 1, 'the driver asked for once the source erased it');
    } finally {
      polling = false;
      await poller;
    }
    expect(seen.length, seen.slice(0, 3).join('\n')).toBe(0);
    expect(compared).toBeGreaterThan(3);

    // b alone holds the driver now; a holds none of it, to the bytes
    expect(await warehouseHolds(cellB, userId)).toBeGreaterThan(0);
    expect(await warehouseHolds(cellA, userId)).toBe(0);
    expect(await slotsHold(cellA, trips)).toBe(0);
    expect(await slotsHold(cellB, trips)).toBeGreaterThan(0);
    expect(await pointsHeld(cellA, trips)).toBe(0);
    expect(await pointsHeld(cellB, trips)).toBeGreaterThan(0);
    for (const trip of trips) {
      expect(filesHolding(join(pathsFor(cellA).landingDir, 'loaded'), trip)).toEqual([]);
      expect(filesHolding(pathsFor(cellA).routesDir, trip)).toEqual([]);
    }
    // the target announced none of the driver's trips again, and nobody announced a deletion
    const events = filesUnder(pathsFor(cellB).eventsDir).flatMap((f) => readFileSync(f, 'utf8').split('\n'));
    expect(events.filter((l) => l.includes('trip.created') && trips.some((t) => l.includes(t)))).toEqual([]);
    const eventsA = filesUnder(pathsFor(cellA).eventsDir).flatMap((f) => readFileSync(f, 'utf8').split('\n'));
    expect(eventsA.filter((l) => l.includes('user.deleted'))).toEqual([]);
    // the percentile's counts: each cell's posted counts are those of the scores it holds, the
    // moved driver's in b's, and together they are the one warehouse's
    const held = async (dir: string) =>
      counted(
        (await publishedRows(pathsFor(dir), 'safety_scores', 'interval_days, safety_score', [])).filter(
          (r) => String(r['evaluation_date']).startsWith(SCORE_DATE) && Number(r['count_trips']) >= 1,
        ),
      );
    const posted = async (cell: string) =>
      counted(
        (
          await db.query(
            'select interval_days, safety_score, drivers from cell_score_counts where cell = $1 and app_id = $2 and evaluation_date = $3 and drivers > 0',
            [cell, appId, SCORE_DATE],
          )
        ).rows,
      );
    expect(await posted('a')).toEqual(await held(cellA));
    expect(await posted('b')).toEqual(await held(cellB));
    expect(merged(await posted('a'), await posted('b'))).toEqual(await held(ref));
    // the account lives on: the cells' counts say where the driver is
    const listed = JSON.parse((await job('cells', cellA, url, ['list', '--json'])).stdout) as {
      cells: { name: string; drivers: number }[];
    };
    expect(listed.cells.map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('loads a new upload of the moved driver in its new cell', async () => {
    const passport = await PassportStore.open({ dataDir: cellA, databaseUrl: url });
    const token = (await passport.issueToken(appId, driver, new Date(), 3_600_000)).token;
    const tripId = 'moved-driver-new-trip';
    const res = await fetch(`${api.url}/v1/sdk/trips`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([
        tripRecord({ appId, tripId, userId, orgUserId: driver, start: '2026-11-19T03:05:00Z', seconds: 120 }),
      ]),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    await job('load', cellA, url, ['--cell', 'a']);
    await job('load', cellB, url, ['--cell', 'b']);
    const held = async (dir: string) =>
      (await publishedRows(pathsFor(dir), 'trips', 'trip_id', [])).some((r) => r['trip_id'] === tripId);
    expect(await held(cellB)).toBe(true);
    expect(await held(cellA)).toBe(false);
    await until(
      async () => {
        const { body } = await get(api.url, `/v1/org-user/${driver}/trip/${tripId}`);
        return (body as { trip?: { tripId?: string } }).trip?.tripId === tripId;
      },
      'the new trip served',
      60_000,
    );
  });

  it('erases a driver deleted while it moves in both cells, the source without waiting for the grace', async () => {
    const [other] = (
      await db.query(
        `select a.org_user_id, a.platform_user_id from accounts a
         join driver_cells d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
         where a.app_id = $1 and d.cell = 'a' and a.org_user_id <> $2 order by a.org_user_id`,
        [appId, driver],
      )
    ).rows as { org_user_id: string; platform_user_id: string }[];
    if (!other) throw new Error('no second driver in cell a');
    const gone = Number(other.platform_user_id);
    expect(await warehouseHolds(cellA, gone)).toBeGreaterThan(0);
    await job('cells', cellA, url, ['move', '--cell', 'a', '--org-user', other.org_user_id, '--to', 'b']);
    // deleted while its package waits for cell b
    const res = await fetch(`${api.url}/v1/org-user/${other.org_user_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    // the target: the request is its own, and the package brings nothing in
    await job('load', cellB, url, ['--cell', 'b']);
    // the source: a grace far off, and still the driver goes
    const erased = await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1h' });
    expect(erased.stderr).toContain('1 driver(s) moved to another cell');
    expect(await warehouseHolds(cellA, gone)).toBe(0);
    expect(await warehouseHolds(cellB, gone)).toBe(0);
    const { rows: moves } = await db.query('select * from driver_moves where platform_user_id = $1', [gone]);
    expect(moves).toEqual([]);
    const { rows: requests } = await db.query('select purged_at from deletion_requests where platform_user_id = $1', [
      gone,
    ]);
    expect(requests.length).toBe(1);
    expect(requests[0]?.purged_at).not.toBeNull();
    expect((await get(api.url, `/v1/org-user/${other.org_user_id}/trips?${RANGE}`)).status).toBe(404);
  });

  it('sends what the source loaded of a driver after its package in a further one before it erases', async () => {
    const [third] = (
      await db.query(
        `select a.org_user_id, a.platform_user_id from accounts a
         join driver_cells d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
         where a.app_id = $1 and d.cell = 'a' and a.deleted_at is null order by a.org_user_id`,
        [appId],
      )
    ).rows as { org_user_id: string; platform_user_id: string }[];
    if (!third) throw new Error('no third driver in cell a');
    const user = Number(third.platform_user_id);
    extra.add(third.org_user_id);
    await job('cells', cellA, url, ['move', '--cell', 'a', '--org-user', third.org_user_id, '--to', 'b']);
    // a record of it loaded by the source after the package was written (files named on the
    // command line are not split by driver)
    const late = join(folder('late'), 'late.ndjson');
    const tripId = 'loaded-after-the-package';
    writeFileSync(
      late,
      `${JSON.stringify(tripRecord({ appId, tripId, userId: user, orgUserId: third.org_user_id, start: '2026-11-18T09:05:00Z', seconds: 120 }))}\n`,
    );
    await job('load', cellA, url, ['--cell', 'a', '--input', late]);
    await job('load', cellB, url, ['--cell', 'b']);
    // past the grace, the source sends the late trip on instead of erasing
    const resent = await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1ms' });
    expect(resent.stderr).not.toContain('moved to another cell');
    expect(await warehouseHolds(cellA, user)).toBeGreaterThan(0);
    await job('load', cellB, url, ['--cell', 'b']);
    const erased = await job('load', cellA, url, ['--cell', 'a'], { DRIVING_CELL_MOVE_GRACE: '1ms' });
    expect(erased.stderr).toContain('1 driver(s) moved to another cell');
    const held = async (dir: string) =>
      (await publishedRows(pathsFor(dir), 'trips', 'trip_id', [])).filter((r) => Number(r['user_id']) === user);
    expect((await held(cellB)).map((r) => r['trip_id'])).toContain(tripId);
    expect(await held(cellA)).toEqual([]);
    expect(await warehouseHolds(cellA, user)).toBe(0);
  });

  it('leaves every other driver answered as the one warehouse answers', async () => {
    const { rows } = await db.query('select org_user_id from accounts where app_id = $1 and org_user_id <> $2', [
      appId,
      driver,
    ]);
    expect(rows.length).toBe(7);
    // the driver deleted above is answered 404 by the reference too: it still has the account
    for (const r of rows.filter((r) => r.org_user_id !== '' && !extra.has(r.org_user_id)))
      expect(await differences(r.org_user_id as string, [])).toEqual([]);
    expect(existsSync(pathsFor(cellB).warehouseFile)).toBe(true);
  });
});
