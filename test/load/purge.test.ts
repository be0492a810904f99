import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { PassportStore } from '../../src/passport/store.js';
import { openDatabase } from '../../src/db/open.js';
import { query, quoteLiteral } from '../../src/db/sql.js';
import { slotFile } from '../../src/publish/manifest.js';
import { readRoute } from '../../src/route/route-file.js';
import { manifestOf, warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';

// One user deletes their account; another stays. After DELETE and one load job, nothing of the
// first may be left in any file the service keeps, and the second must be served as before.
let ws: Workspace;
let key: string;
let leaver: number;
let keeper: number;
const clock = new Date('2026-11-21T09:00:00Z');
const leaverTrips = ['leaver-a1', 'leaver-a2', 'leaver-b1', 'leaver-c1'];
const keeperTrips = [...Array.from({ length: 8 }, (_, i) => `keeper-a${i}`), 'keeper-c1'];

const trip = (tripId: string, userId: number, orgUserId: string, day: number, hour: number, events = true) =>
  tripRecord({
    appId: ws.appId,
    tripId,
    userId,
    orgUserId,
    start: `2026-11-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00+01:00`,
    seconds: 600,
    events: events ? [{ type: 'brake', from: 100, to: 103 }] : [],
  });

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** A file's bytes as the service would read them (gzip unpacked). */
const contentOf = (file: string): Buffer =>
  file.endsWith('.gz') ? gunzipSync(readFileSync(file)) : readFileSync(file);

async function withDb<T>(
  fn: (c: Awaited<ReturnType<typeof openDatabase>>['connection']) => Promise<T>,
  path = ':memory:',
): Promise<T> {
  const db = await openDatabase(path, { readOnly: path !== ':memory:' });
  try {
    return await fn(db.connection);
  } finally {
    db.close();
  }
}

const get = (api: Awaited<ReturnType<typeof createApi>>, url: string) =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

/** The keeper's answers to operations 1-4, to compare before and after the purge. */
async function keeperAnswers(api: Awaited<ReturnType<typeof createApi>>): Promise<unknown[]> {
  const urls = [
    '/v1/org-user/keeper/trips?limit=100&startTime=2026-11-01&endTime=2026-11-21',
    '/v1/org-user/keeper/trip/keeper-a3',
    '/v1/org-user/keeper/statistics?type=day&startTime=2026-11-08&endTime=2026-11-14',
    '/v1/org-user/keeper/statistics?type=month&startTime=2026-11-01&endTime=2026-11-30',
    '/v1/org-user/keeper/safety-score?interval=30',
  ];
  return Promise.all(
    urls.map(async (u) => {
      const res = await get(api, u);
      expect(res.statusCode, u).toBe(200);
      return res.json();
    }),
  );
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, ['leaver', 'keeper']);
  passport.close();
  leaver = ids.get('leaver') as number;
  keeper = ids.get('keeper') as number;

  const landing = ws.paths.landingDir;
  mkdirSync(landing, { recursive: true });
  // day 1: the keeper's history (the serving pack's base), the leaver's first trips, rejected lines
  const day1 = [
    ...keeperTrips.slice(0, 8).map((id, i) => trip(id, keeper, 'keeper', 9 + (i % 4), 7 + Math.floor(i / 4))),
    trip('leaver-a1', leaver, 'leaver', 10, 12),
    trip('leaver-a2', leaver, 'leaver', 11, 12, false),
    { ...trip('leaver-bad-os', leaver, 'leaver', 10, 14), os: 'windows' },
    { ...trip('leaver-no-id', leaver, 'leaver', 10, 15), platformUserId: 'not-a-number' },
    { ...trip('keeper-bad-os', keeper, 'keeper', 10, 14), os: 'windows' },
  ].map((r) => JSON.stringify(r));
  writeFileSync(join(landing, 'day1.ndjson'), [...day1, '{"appId": "broken', ''].join('\n'));
  await runLoad({ dataDir: ws.dir, now: clock });
  // day 2: one trip of the leaver, gzipped: a small delta layer of its own
  writeFileSync(
    join(landing, 'day2.ndjson.gz'),
    gzipSync(`${JSON.stringify(trip('leaver-b1', leaver, 'leaver', 12, 8))}\n`),
  );
  await runLoad({ dataDir: ws.dir, now: clock });
  // day 3: Parquet, both users
  const ndjson = join(ws.dir, 'day3.ndjson');
  const asParquet = (r: Record<string, unknown>) => ({
    ...r,
    startTime: Date.parse(String(r['startTime'])),
    endTime: Date.parse(String(r['endTime'])),
  });
  writeFileSync(
    ndjson,
    [trip('keeper-c1', keeper, 'keeper', 13, 8, false), trip('leaver-c1', leaver, 'leaver', 13, 9, false)]
      .map((r) => JSON.stringify(asParquet(r)))
      .join('\n'),
  );
  await withDb((c) =>
    query(
      c,
      `copy (
      select appId, platformUserId, orgUserId, tripId, '' as deviceId, os, 'WGS84' as coordinate, false as isAutoStart, false as isAutoEnd,
          startTime, endTime, '' as startPoi, '' as endPoi, points,
          []::struct(type varchar, startTime varchar, endTime varchar, startPoint struct(lat double, lng double), endPoint struct(lat double, lng double), description varchar)[] as events
      from read_json(${quoteLiteral(ndjson)})) to ${quoteLiteral(join(landing, 'day3.parquet'))} (format parquet)`,
    ),
  );
  rmSync(ndjson);
  // a file of the leaver alone, and a failed file (invalid UTF-8) holding a line of each
  writeFileSync(join(landing, 'day4.ndjson'), `${JSON.stringify(trip('leaver-d1', leaver, 'leaver', 14, 8))}\n`);
  const failed = Buffer.concat([
    Buffer.from(`${JSON.stringify(trip('leaver-f1', leaver, 'leaver', 15, 8))}\n`),
    Buffer.from([0xff, 0xfe, 0x0a]),
    Buffer.from(`${JSON.stringify(trip('keeper-f1', keeper, 'keeper', 15, 8))}\n`),
  ]);
  writeFileSync(join(landing, 'day5.ndjson'), failed);
  await runLoad({ dataDir: ws.dir, now: clock });
  await runScore({ dataDir: ws.dir, date: '2026-11-21', now: clock });
});
afterAll(() => ws.cleanup());

describe('purge: every copy of a deleted user', () => {
  it('leaves nothing of the user in any file, and serves the other user identically', async () => {
    const leaverIds = [...leaverTrips, 'leaver-bad-os', 'leaver-no-id', 'leaver-d1', 'leaver-f1'];
    // the setup put the leaver everywhere
    expect(
      (await warehouseRows(ws.paths, `select count(*)::int as n from trips where user_id = ${leaver}`))[0]?.['n'],
    ).toBe(5);
    expect(
      (await warehouseRows(ws.paths, "select count(*)::int as n from quarantine where raw like '%leaver-%'"))[0]?.['n'],
    ).toBe(2);
    const failedFile = filesUnder(join(ws.paths.landingDir, 'failed')).find((f) => f.endsWith('day5.ndjson')) as string;
    expect(failedFile).toBeDefined();

    let api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    let before: unknown[];
    try {
      expect((await get(api, '/v1/org-user/leaver/trips?limit=100')).json().trips).toHaveLength(5);
      before = await keeperAnswers(api);
      const deleted = await api.app.inject({
        method: 'DELETE',
        url: '/v1/org-user/leaver',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(deleted.statusCode).toBe(200);
    } finally {
      await api.close();
    }
    const served = manifestOf(ws.paths);

    const purged = await runLoad({ dataDir: ws.dir, now: clock });
    expect(purged.purged).toMatchObject({
      users: 1,
      trips: 5,
      quarantined: 2,
      archivesRewritten: 3,
      archivesRemoved: 2,
      archivesUnreadable: [],
    });
    expect(purged.publish.detail).toContain(`slot ${served?.slot} purged too`);

    // the warehouse, by SQL
    for (const table of ['trips', 'trip_events', 'stats_daily', 'safety_scores']) {
      expect(await warehouseRows(ws.paths, `select * from ${table} where user_id = ${leaver}`), table).toEqual([]);
      expect(
        (await warehouseRows(ws.paths, `select count(*)::int as n from ${table} where user_id = ${keeper}`))[0]?.['n'],
        table,
      ).toBeGreaterThan(0);
    }
    // and what webhook events announced of them
    expect(await warehouseRows(ws.paths, `select * from announced_scores where user_id = ${leaver}`)).toEqual([]);
    expect(await warehouseRows(ws.paths, `select trip_id from announced_trips where trip_id like 'leaver-%'`)).toEqual(
      [],
    );
    expect(
      (
        await warehouseRows(ws.paths, `select count(*)::int as n from announced_trips where trip_id like 'keeper-%'`)
      )[0]?.['n'],
    ).toBeGreaterThan(0);
    const quarantine = await warehouseRows(ws.paths, 'select reason, raw from quarantine order by line_no');
    expect(quarantine.map((q) => q['reason'])).toEqual(['invalid_os', 'invalid_json']);
    expect(quarantine.map((q) => String(q['raw']))).toEqual([
      expect.stringContaining('keeper-bad-os'),
      '{"appId": "broken',
    ]);

    // raw points, through DuckDB
    const points = await withDb((c) =>
      query(c, 'select trip_id, count(*)::int as n from read_parquet($g) group by all order by 1', {
        g: join(ws.paths.pointsDir, '**', '*.parquet'),
      }),
    );
    expect(points.map((p) => p['trip_id'])).toEqual([...keeperTrips].sort());

    // both slots, opened read-only
    for (const slot of ['a', 'b'] as const) {
      for (const table of ['trips', 'trip_events', 'stats_daily', 'safety_scores']) {
        const rows = await withDb(
          (c) => query(c, `select user_id::bigint as u, count(*)::int as n from ${table} group by all`),
          slotFile(ws.paths.publishedDir, slot),
        );
        expect(
          rows.map((r) => Number(r['u'])),
          `slot ${slot} ${table}`,
        ).toEqual([keeper]);
      }
    }

    // every serving file, by bytes: the served pack holds the keeper, no file holds the leaver
    const published = filesUnder(ws.paths.publishedDir).filter((f) => !f.endsWith('.duckdb') && !f.endsWith('.wal'));
    const named = Object.values(manifestOf(ws.paths)?.pack?.files ?? {}).flat();
    const routeFiles = published.filter((f) => f.startsWith(`${ws.paths.routesDir}/`));
    expect(
      published
        .filter((f) => !routeFiles.includes(f))
        .map((f) => f.slice(ws.paths.publishedDir.length + 1))
        .sort(),
    ).toEqual(['manifest.json', ...named.flatMap((n) => [n, `${n}.extras`])].sort());
    // route files (the trips' points the route operation serves): every one is a whole route file,
    // and together they hold the keeper's trips only (checked by bytes with the pack below)
    expect(routeFiles.length).toBeGreaterThan(0);
    expect(purged.purged.routeFilesRewritten).toBeGreaterThan(0);
    for (const file of routeFiles) {
      for (const id of leaverTrips) expect(readRoute(file, ws.appId, id), `${file}: ${id}`).toBeNull();
    }
    const packBytes = Buffer.concat(published.map((f) => readFileSync(f)));
    for (const id of leaverIds) expect(packBytes.includes(id), id).toBe(false);
    for (const id of keeperTrips) expect(packBytes.includes(id), id).toBe(true);

    // the landing archives: the leaver's records gone, the keeper's intact (NDJSON, gzip, Parquet, failed)
    const archives = filesUnder(join(ws.paths.landingDir, 'loaded'));
    // day2.ndjson.gz and day4.ndjson held the leaver alone: removed
    expect(archives.map((f) => f.split('/').pop()).sort()).toEqual(['day1.ndjson', 'day3.parquet']);
    const text = Buffer.concat(archives.filter((f) => !f.endsWith('.parquet')).map(contentOf)).toString('utf8');
    const day1Lines = contentOf(archives.find((f) => f.endsWith('day1.ndjson')) as string)
      .toString('utf8')
      .split('\n');
    // a removed record leaves its line empty: the others keep their line numbers
    expect(
      day1Lines.map((l) =>
        l === ''
          ? ''
          : ((JSON.parse(l.startsWith('{"appId": "broken') ? '{}' : l) as { tripId?: string }).tripId ?? 'broken'),
      ),
    ).toEqual([...keeperTrips.slice(0, 8), '', '', '', '', 'keeper-bad-os', 'broken', '']);
    const parquetRows = await withDb((c) =>
      query(c, 'select tripId from read_parquet($f)', { f: archives.find((f) => f.endsWith('.parquet')) as string }),
    );
    expect(parquetRows.map((r) => r['tripId'])).toEqual(['keeper-c1']);
    const failedAfter = readFileSync(failedFile);
    expect(
      failedAfter.equals(
        Buffer.concat([
          Buffer.from('\n'),
          Buffer.from([0xff, 0xfe, 0x0a]),
          Buffer.from(`${JSON.stringify(trip('keeper-f1', keeper, 'keeper', 15, 8))}\n`),
        ]),
      ),
    ).toBe(true);

    // every other file under the data folder, by bytes (DuckDB databases and Parquet were checked
    // by SQL above; webhook events announced before the deletion are the deliverer's, not trip data)
    const rest = filesUnder(ws.dir).filter(
      (f) => !/\.(duckdb|wal|parquet)$/.test(f) && !f.startsWith(join(ws.dir, 'events')),
    );
    for (const file of rest) {
      const bytes = contentOf(file);
      for (const id of leaverIds) expect(bytes.includes(id), `${file}: ${id}`).toBe(false);
      expect(bytes.includes(`"leaver"`), file).toBe(false);
    }
    expect(text).toContain('keeper-a0');

    // a rewritten archive is known to the ledger: loading it again changes nothing
    const again = await runLoad({ dataDir: ws.dir, inputs: archives, now: clock });
    expect(again.files.map((f) => f.skipped)).toEqual([true, true]);
    expect(again.purged.users).toBe(0);

    // the keeper is served exactly as before; the leaver is gone
    api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    try {
      expect(await keeperAnswers(api)).toEqual(before);
      expect((await get(api, '/v1/org-user/leaver/trips')).statusCode).toBe(404);
    } finally {
      await api.close();
    }
  });
});

describe('purge: the slot the API still holds', () => {
  it('is purged by the next publish when the API does not let go of it in time', async () => {
    const other = await workspace('UTC');
    try {
      const record = (tripId: string, userId: number, org: string, day: number) =>
        tripRecord({
          appId: other.appId,
          tripId,
          userId,
          orgUserId: org,
          start: `2026-11-${day}T08:00:00Z`,
          seconds: 600,
        });
      const input = (name: string, records: unknown[]) => {
        const file = join(other.dir, 'in', name);
        mkdirSync(join(other.dir, 'in'), { recursive: true });
        writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
        return [file];
      };
      await runLoad({
        dataDir: other.dir,
        inputs: input('1.ndjson', [record('gone-1', 7, 'gone', 10), record('stay-1', 8, 'stay', 10)]),
        now: clock,
      });
      await runLoad({ dataDir: other.dir, inputs: input('2.ndjson', [record('stay-2', 8, 'stay', 11)]), now: clock });
      const held = manifestOf(other.paths)?.slot as 'a' | 'b';
      await recordDeletionIn(other.dir, {
        appId: other.appId,
        platformUserId: 7,
        orgUserId: 'gone',
        requestedAt: clock.toISOString(),
      });
      // an API in another process still reading the served slot
      const { spawn } = await import('node:child_process');
      const holder = spawn(
        process.execPath,
        [
          '-e',
          `
        const { DuckDBInstance } = await import('@duckdb/node-api');
        const i = await DuckDBInstance.create(${JSON.stringify(slotFile(other.paths.publishedDir, held))}, { access_mode: 'READ_ONLY' });
        await i.connect(); console.log('holding'); process.stdin.on('data', () => process.exit(0));`,
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) => holder.stdout.on('data', () => resolve()));
      process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'] = '300';
      try {
        const purged = await runLoad({ dataDir: other.dir, inputs: [], now: clock });
        expect(purged.publish.detail).toContain(`slot ${held} still held by a reader: purged at the next publish`);
      } finally {
        delete process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'];
        holder.stdin.write('x');
        await new Promise((resolve) => holder.on('exit', resolve));
      }
      const usersIn = (slot: 'a' | 'b') =>
        withDb(
          (c) => query(c, 'select distinct user_id::int as u from trips order by 1'),
          slotFile(other.paths.publishedDir, slot),
        );
      expect(await usersIn(held)).toEqual([{ u: 7 }, { u: 8 }]);
      await runLoad({ dataDir: other.dir, inputs: input('3.ndjson', [record('stay-3', 8, 'stay', 12)]), now: clock });
      expect(await usersIn('a')).toEqual([{ u: 8 }]);
      expect(await usersIn('b')).toEqual([{ u: 8 }]);
    } finally {
      other.cleanup();
    }
  });
});

describe('purge: the export in the data folder', () => {
  it("writes the default export again without the purged accounts, and leaves an export written elsewhere as the operator's copy", async () => {
    const other = await workspace('UTC');
    const elsewhere = join(other.dir, '..', `${other.dir.split('/').pop()}-export`);
    try {
      const file = join(other.dir, 'in', '1.ndjson');
      mkdirSync(join(other.dir, 'in'), { recursive: true });
      writeFileSync(
        file,
        [7, 8]
          .map((u) =>
            JSON.stringify(
              tripRecord({
                appId: other.appId,
                tripId: `t-${u}`,
                userId: u,
                orgUserId: `org-${u}`,
                start: '2026-11-10T08:00:00Z',
                seconds: 600,
              }),
            ),
          )
          .join('\n'),
      );
      await runLoad({ dataDir: other.dir, inputs: [file], now: clock });
      const { runExport } = await import('../../src/jobs/export.js');
      const inside = await runExport({ dataDir: other.dir });
      expect(inside).toMatchObject({ out: other.paths.exportsDir, purgedWithAccounts: true });
      expect(inside.note).toMatch(
        /^inside the data folder: the next load or score that purges a deleted account writes this export again without them/,
      );
      const outside = await runExport({ dataDir: other.dir, out: elsewhere });
      expect(outside).toMatchObject({ purgedWithAccounts: false });
      expect(outside.note).toMatch(/^outside the data folder: the operator's copy, which purges never reach/);

      // a load with no deletion pending leaves both
      expect((await runLoad({ dataDir: other.dir, inputs: [], now: clock })).erasure.exportRewritten).toBe(false);
      expect(existsSync(join(other.paths.exportsDir, 'apps.parquet'))).toBe(true);

      await recordDeletionIn(other.dir, {
        appId: other.appId,
        platformUserId: 7,
        orgUserId: 'org-7',
        requestedAt: clock.toISOString(),
      });
      const purged = await runLoad({ dataDir: other.dir, inputs: [], now: clock });
      expect(purged.purged).toMatchObject({ users: 1 });
      expect(purged.erasure.exportRewritten).toBe(true);
      const rewritten = await withDb((c) =>
        query(c, 'select user_id::int as u from read_parquet($f, hive_partitioning = true) order by 1', {
          f: join(other.paths.exportsDir, 'trips', '**', '*.parquet'),
        }),
      );
      expect(rewritten).toEqual([{ u: 8 }]);
      const kept = await withDb((c) =>
        query(c, 'select user_id::int as u from read_parquet($f, hive_partitioning = true) order by 1', {
          f: join(elsewhere, 'trips', '**', '*.parquet'),
        }),
      );
      expect(kept).toEqual([{ u: 7 }, { u: 8 }]);
    } finally {
      other.cleanup();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
