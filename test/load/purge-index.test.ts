import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { runLoad } from '../../src/jobs/load.js';
import { runPurgeJob, type PurgeJobResult } from '../../src/jobs/purge.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';

// Three drivers in three loaded files, and two archives from before the index: deleting one
// driver opens only the loaded file that holds them, their points and route files of that file,
// and the archives the index does not know; every other file is left unread.
let ws: Workspace;
let purge: PurgeJobResult;
const clock = new Date('2026-11-21T09:00:00Z');
const A = 101;
const B = 102;
const C = 103;
const bytes: Record<string, Buffer> = {};

const trip = (tripId: string, userId: number, day: number, hour: number) =>
  JSON.stringify(
    tripRecord({
      appId: ws.appId,
      tripId,
      userId,
      orgUserId: `org-${userId}`,
      start: `2026-11-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00+01:00`,
      seconds: 300,
    }),
  );

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const archived = (name: string): string =>
  filesUnder(join(ws.paths.landingDir, 'loaded')).find((f) => f.endsWith(`/${name}`)) as string;

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const landing = ws.paths.landingDir;
  mkdirSync(landing, { recursive: true });
  writeFileSync(join(landing, 'ab.ndjson'), `${trip('a-1', A, 10, 8)}\n${trip('b-1', B, 10, 9)}\n`);
  writeFileSync(join(landing, 'b.ndjson'), `${trip('b-2', B, 10, 12)}\n`);
  writeFileSync(join(landing, 'c.ndjson.gz'), gzipSync(`${trip('c-1', C, 11, 8)}\n`));
  const loaded = await runLoad({ dataDir: ws.dir, now: clock });
  expect(loaded.totals.tripsLoaded).toBe(4);
  // archives from before the index: it does not know them, so they may hold anyone
  const legacy = join(landing, 'loaded', '2026-11-01');
  mkdirSync(legacy, { recursive: true });
  writeFileSync(join(legacy, 'legacy-ac.ndjson'), `${trip('a-0', A, 1, 8)}\n${trip('c-0', C, 1, 9)}\n`);
  writeFileSync(join(legacy, 'legacy-c.ndjson'), `${trip('c-00', C, 1, 10)}\n`);
  for (const f of filesUnder(ws.dir).filter((f) => /\.(ndjson|gz|parquet|route)$/.test(f))) bytes[f] = readFileSync(f);
  await recordDeletionIn(ws.dir, {
    appId: ws.appId,
    platformUserId: A,
    orgUserId: `org-${A}`,
    requestedAt: '2026-11-21T08:00:00Z',
  });
  purge = await runPurgeJob({ dataDir: ws.dir, now: clock });
});
afterAll(() => ws.cleanup());

describe('purge: the index of which files hold which drivers', () => {
  it('opens only the archives that hold the driver or that the index does not know, and reads only those', () => {
    const opened = [archived('ab.ndjson'), archived('legacy-ac.ndjson'), archived('legacy-c.ndjson')];
    expect(purge.purged.users).toBe(1);
    expect(purge.purged.opened.archives).toEqual({
      files: 3,
      bytes: opened.reduce((n, f) => n + (bytes[f] as Buffer).length, 0),
    });
    expect(purge.purged.archivesRewritten).toBe(2);
    // the driver's lines are gone, their line numbers kept; everyone else's bytes are as they were
    expect(readFileSync(archived('ab.ndjson'), 'utf8')).toBe(`\n${trip('b-1', B, 10, 9)}\n`);
    expect(readFileSync(archived('legacy-ac.ndjson'), 'utf8')).toBe(`\n${trip('c-0', C, 1, 9)}\n`);
    for (const name of ['b.ndjson', 'c.ndjson.gz', 'legacy-c.ndjson'])
      expect(readFileSync(archived(name)).equals(bytes[archived(name)] as Buffer), name).toBe(true);
  });

  it("opens only the points and route files of the driver's loaded file, not the others of the same day", async () => {
    const [abKey] = (
      await warehouseRows(ws.paths, "select file_key from loaded_files where path like '%/ab.ndjson'")
    ).map((r) => String(r['file_key']));
    const day = join(ws.paths.pointsDir, 'trip_date=2026-11-10');
    const points = readdirSync(day).filter((n) => n.endsWith('.parquet'));
    // the day holds the points of both files: only the one of ab.ndjson is opened
    expect(points.length).toBe(2);
    const abPoints = join(day, points.find((n) => n.startsWith(`f${String(abKey).slice(0, 16)}_`)) as string);
    expect(purge.purged.opened.points).toEqual({ files: 1, bytes: (bytes[abPoints] as Buffer).length });
    expect(purge.purged.pointFilesRewritten).toBe(1);
    const routes = filesUnder(join(ws.paths.routesDir, 'trip_date=2026-11-10')).filter((f) => f.endsWith('.route'));
    expect(routes.length).toBe(2);
    expect(purge.purged.opened.routes.files).toBe(1);
    expect(purge.purged.routeFilesRewritten).toBe(1);
    // the other route file of the day is as it was, byte for byte
    const untouched = routes.filter((f) => readFileSync(f).equals(bytes[f] as Buffer));
    expect(untouched.length).toBe(1);
  });

  it('forgets the driver: the index holds none of their rows after the purge', async () => {
    const rows = await warehouseRows(
      ws.paths,
      `select (select count(*) from file_drivers where user_id = ${A} or org_user_id = 'org-${A}')::int as files,
              (select count(*) from route_file_drivers where user_id = ${A})::int as routes,
              (select count(*) from file_drivers where user_id = ${B})::int as others`,
    );
    expect(rows[0]).toEqual({ files: 0, routes: 0, others: 2 });
  });

  it('forgets the files retention removed: a purge past the retention leaves no row of them', async () => {
    const later = new Date(clock.getTime() + 40 * 86_400_000);
    const before = await warehouseRows(ws.paths, 'select count(*)::int as n from indexed_files');
    expect(before[0]?.['n']).toBe(3);
    await runPurgeJob({ dataDir: ws.dir, now: later });
    const rows = await warehouseRows(
      ws.paths,
      `select (select count(*) from indexed_files)::int as files, (select count(*) from file_drivers)::int as drivers,
              (select count(*) from route_file_drivers)::int as routes`,
    );
    expect(rows[0]).toEqual({ files: 0, drivers: 0, routes: 0 });
  });
});

describe('purge: an archive moved under a new name', () => {
  it('is found by the name it was loaded under when moveLanded had to rename it', async () => {
    const other = await workspace('Europe/Berlin');
    try {
      const landing = other.paths.landingDir;
      mkdirSync(landing, { recursive: true });
      const line = (tripId: string, userId: number) =>
        JSON.stringify(
          tripRecord({
            appId: other.appId,
            tripId,
            userId,
            orgUserId: `org-${userId}`,
            start: '2026-11-10T08:00:00+01:00',
            seconds: 120,
          }),
        );
      // the same name twice on one day: the second is archived as `<ms>-same.ndjson`
      writeFileSync(join(landing, 'same.ndjson'), `${line('b-1', B)}\n`);
      await runLoad({ dataDir: other.dir, now: clock });
      writeFileSync(join(landing, 'same.ndjson'), `${line('a-1', A)}\n${line('b-2', B)}\n`);
      await runLoad({ dataDir: other.dir, now: clock });
      const renamed = filesUnder(join(landing, 'loaded')).find((f) => /\/\d+-same\.ndjson$/.test(f)) as string;
      expect(renamed).toBeDefined();
      await recordDeletionIn(other.dir, {
        appId: other.appId,
        platformUserId: A,
        orgUserId: `org-${A}`,
        requestedAt: '2026-11-21T08:00:00Z',
      });
      const purged = await runPurgeJob({ dataDir: other.dir, now: clock });
      // both files were loaded as same.ndjson on that day, so both may be the one: both are opened
      expect(purged.purged.opened.archives.files).toBe(2);
      expect(purged.purged.archivesRewritten).toBe(1);
      expect(readFileSync(renamed, 'utf8')).toBe(`\n${line('b-2', B)}\n`);
    } finally {
      other.cleanup();
    }
  });
});

describe('purge: archives loaded before the index', () => {
  it('are opened by every purge until a re-derive indexes them', async () => {
    const old = await workspace('Europe/Berlin');
    try {
      const landing = old.paths.landingDir;
      mkdirSync(landing, { recursive: true });
      const line = (tripId: string, userId: number) =>
        JSON.stringify(
          tripRecord({
            appId: old.appId,
            tripId,
            userId,
            orgUserId: `org-${userId}`,
            start: '2026-11-10T08:00:00+01:00',
            seconds: 120,
          }),
        );
      writeFileSync(join(landing, 'bc.ndjson'), `${line('b-1', B)}\n${line('c-1', C)}\n`);
      await runLoad({ dataDir: old.dir, now: clock });
      // as a warehouse of a release without the index has it: the file loaded, nothing indexed
      const db = await openDatabase(old.paths.warehouseFile);
      try {
        await query(db.connection, 'delete from file_drivers');
        await query(db.connection, 'delete from indexed_files');
      } finally {
        db.close();
      }
      const deleteAndPurge = async (userId: number) => {
        await recordDeletionIn(old.dir, {
          appId: old.appId,
          platformUserId: userId,
          orgUserId: `org-${userId}`,
          requestedAt: '2026-11-21T08:00:00Z',
        });
        return (await runPurgeJob({ dataDir: old.dir, now: clock })).purged;
      };
      // A is in no file: the archive the index does not know is opened all the same
      expect((await deleteAndPurge(A)).opened.archives.files).toBe(1);
      await runRederive({ dataDir: old.dir, now: clock });
      // known now, and without the driver: left unread
      expect((await deleteAndPurge(A + 10)).opened.archives.files).toBe(0);
      // and found for the drivers it holds
      const purged = await deleteAndPurge(C);
      expect(purged.opened.archives.files).toBe(1);
      expect(purged.archivesRewritten).toBe(1);
    } finally {
      old.cleanup();
    }
  });
});
