// Erasure reaches the bytes (docs/decisions.md, "Deletion"): after DELETE and the one load that purges, a byte scan
// of every file under the data folder (DuckDB databases and their logs, Parquet, archives, events,
// exports) finds none of the deleted user's tripIds or deviceId, and their orgUserId only where the
// account's deletion record lives (the passport store, the warehouse's ledger of purged users) and
// in their user.deleted event. An export run after the DELETE, before the purge, leaves them out;
// an archive the purge cannot read is removed and named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runExport } from '../../src/jobs/export.js';
import { PassportStore } from '../../src/passport/store.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { filesUnder } from '../helpers/files.js';

let ws: Workspace;
let key: string;
let leaver: number;
let keeper: number;
const clock = new Date('2026-11-21T09:00:00Z');
// identifiers no other byte of the data folder could hold by chance
const LEAVER_ORG = 'org-leaver-q7x2';
const LEAVER_DEVICE = 'device-leaver-k93mzw';
const leaverTrips = ['trip-leaver-zq81-a', 'trip-leaver-zq81-b', 'trip-leaver-zq81-c'];
const keeperTrips = ['trip-keeper-p4-a', 'trip-keeper-p4-b', 'trip-keeper-p4-c'];

const trip = (tripId: string, userId: number, orgUserId: string, device: string, day: number) =>
  tripRecord({
    appId: ws.appId,
    tripId,
    userId,
    orgUserId,
    start: `2026-11-${day}T08:00:00+01:00`,
    seconds: 600,
    events: [{ type: 'brake', from: 100, to: 103 }],
    extra: { deviceId: device },
  });

/** The files under the data folder whose bytes (gzip unpacked where it can be) hold `text`. */
function filesHolding(text: string, dir = ws.dir): string[] {
  const needle = Buffer.from(text, 'utf8');
  return filesUnder(dir)
    .filter((file) => {
      const bytes = readFileSync(file);
      let unpacked: Buffer | null = null;
      if (file.endsWith('.gz')) {
        try {
          unpacked = gunzipSync(bytes);
        } catch {
          unpacked = null;
        }
      }
      return bytes.includes(needle) || (unpacked?.includes(needle) ?? false);
    })
    .map((f) => relative(dir, f))
    .sort();
}

async function rowsOf(sql: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
  const db = await openDatabase(':memory:');
  try {
    return await query(db.connection, sql, params as never);
  } finally {
    db.close();
  }
}

const purgeLog: string[] = [];
let truncatedArchive = '';
let afterDelete = '';

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, [LEAVER_ORG, 'keeper']);
  passport.close();
  leaver = ids.get(LEAVER_ORG) as number;
  keeper = ids.get('keeper') as number;
  mkdirSync(ws.paths.landingDir, { recursive: true });
  // two loads: a base and a delta layer, both slots written, raw points and route files of two days
  writeFileSync(
    join(ws.paths.landingDir, 'day1.ndjson'),
    [
      trip(leaverTrips[0]!, leaver, LEAVER_ORG, LEAVER_DEVICE, 18),
      trip(keeperTrips[0]!, keeper, 'keeper', 'device-keeper', 18),
      trip(leaverTrips[1]!, leaver, LEAVER_ORG, LEAVER_DEVICE, 19),
      trip(keeperTrips[1]!, keeper, 'keeper', 'device-keeper', 19),
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  await runLoad({ dataDir: ws.dir, now: clock });
  writeFileSync(
    join(ws.paths.landingDir, 'day2.ndjson'),
    [
      trip(leaverTrips[2]!, leaver, LEAVER_ORG, LEAVER_DEVICE, 20),
      trip(keeperTrips[2]!, keeper, 'keeper', 'device-keeper', 20),
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  await runLoad({ dataDir: ws.dir, now: clock });
  // the analysts' export inside the data folder holds both users
  await runExport({ dataDir: ws.dir });
  // a failed archive that cannot be read: a gzip cut short, holding the leaver's line
  const gz = gzipSync(
    `${JSON.stringify(trip('trip-leaver-zq81-failed', leaver, LEAVER_ORG, LEAVER_DEVICE, 17))}\n`.repeat(50),
  );
  truncatedArchive = join(ws.paths.landingDir, 'failed', '2026-11-20', 'cut.ndjson.gz');
  mkdirSync(join(truncatedArchive, '..'), { recursive: true });
  writeFileSync(truncatedArchive, gz.subarray(0, Math.floor(gz.length / 2)));

  const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  try {
    const deleted = await api.app.inject({
      method: 'DELETE',
      url: `/v1/org-user/${LEAVER_ORG}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(deleted.statusCode).toBe(200);
  } finally {
    await api.close();
  }
  // an export after the DELETE, before any job purged
  // outside the data folder: inside it an export goes to exports/ only
  afterDelete = `${ws.dir}-exports-after-delete`;
  await runExport({ dataDir: ws.dir, out: afterDelete });
}, 180_000);
afterAll(() => {
  ws.cleanup();
  if (afterDelete) rmSync(afterDelete, { recursive: true, force: true });
});

describe('erasure reaches the bytes', () => {
  it('an export run after the DELETE, before the purge, never holds the user; the keeper is exported', async () => {
    const trips = await rowsOf(
      'select user_id::bigint as u, trip_id from read_parquet($g, hive_partitioning = true) order by trip_id',
      { g: join(afterDelete, 'trips', '**', '*.parquet') },
    );
    expect(trips.map((r) => String(r['trip_id']))).toEqual([...keeperTrips].sort());
    for (const table of ['trip_events', 'stats_daily']) {
      const users = await rowsOf(
        'select distinct user_id::bigint as u from read_parquet($g, hive_partitioning = true)',
        { g: join(afterDelete, table, '**', '*.parquet') },
      );
      expect(
        users.map((r) => Number(r['u'])),
        table,
      ).toEqual([keeper]);
    }
  });

  it('before the purge, the scan finds the user in the warehouse, both slots and the event files, and the export holds them (the scan can see them)', async () => {
    const holding = filesHolding(leaverTrips[0]!);
    expect(holding).toEqual(
      expect.arrayContaining(['warehouse/warehouse.duckdb', 'published/slot-a.duckdb', 'published/slot-b.duckdb']),
    );
    // Parquet compresses its pages, and how depends on how DuckDB's threads split the rows: whether
    // an id's bytes show in the file is not fixed, so the export is read instead
    const exported = await rowsOf('select trip_id from read_parquet($g, hive_partitioning = true)', {
      g: join(ws.paths.exportsDir, 'trips', '**', '*.parquet'),
    });
    expect(exported.map((r) => String(r['trip_id']))).toContain(leaverTrips[0]);
    expect(holding.some((f) => f.startsWith('events/pending/'))).toBe(true);
    expect(filesHolding(LEAVER_DEVICE)).toContain('warehouse/warehouse.duckdb');
  });

  it("after the load that purges, no file under the data folder holds the user's tripIds or deviceId; the orgUserId only in the deletion record and user.deleted", async () => {
    const result = await runLoad({ dataDir: ws.dir, now: clock, progress: (m) => purgeLog.push(m) });
    expect(result.purged.users).toBe(1);
    // the archive that cannot be read is removed, and named in the log
    expect(result.purged.archivesUnreadable).toEqual([truncatedArchive]);
    expect(existsSync(truncatedArchive)).toBe(false);
    expect(purgeLog.some((l) => l.includes(truncatedArchive) && l.includes('removed'))).toBe(true);
    expect(result.erasure.warehouse).not.toBeNull();
    expect(result.erasure.exportRewritten).toBe(true);
    expect(result.erasure.eventsDropped).toBeGreaterThan(0);
    process.stderr.write(`${purgeLog.filter((l) => /rewritten without|erasure/.test(l)).join('\n')}\n`);

    for (const id of [...leaverTrips, 'trip-leaver-zq81-failed', LEAVER_DEVICE])
      expect(filesHolding(id), id).toEqual([]);
    // the org user id: the passport store (the account's deletion record; its own files), the
    // warehouse's ledger of purged users, and the user.deleted event in the event files
    const org = filesHolding(LEAVER_ORG);
    const allowed = (f: string) =>
      f.startsWith('passport/') ||
      f.startsWith('state/') ||
      f === 'warehouse/warehouse.duckdb' ||
      f.startsWith('events/pending/');
    expect(org.filter((f) => !allowed(f))).toEqual([]);
    for (const file of org.filter((f) => f.startsWith('events/pending/'))) {
      const lines = readFileSync(join(ws.dir, file), 'utf8')
        .split('\n')
        .filter((l) => l.includes(LEAVER_ORG));
      expect(
        lines.map((l) => (JSON.parse(l) as { type: string }).type),
        file,
      ).toEqual(lines.map(() => 'user.deleted'));
    }
    // the keeper's data is still everywhere it was
    for (const id of keeperTrips)
      expect(filesHolding(id), id).toEqual(
        expect.arrayContaining(['warehouse/warehouse.duckdb', 'published/slot-a.duckdb', 'published/slot-b.duckdb']),
      );
    const exported = await rowsOf('select trip_id from read_parquet($g, hive_partitioning = true) order by 1', {
      g: join(ws.paths.exportsDir, 'trips', '**', '*.parquet'),
    });
    expect(exported.map((r) => r['trip_id'])).toEqual([...keeperTrips].sort());
  });

  it('the rewritten warehouse and slots are whole: the next load and the API serve the keeper', async () => {
    writeFileSync(
      join(ws.paths.landingDir, 'day3.ndjson'),
      JSON.stringify(trip('trip-keeper-p4-d', keeper, 'keeper', 'device-keeper', 21)),
    );
    const next = await runLoad({ dataDir: ws.dir, now: clock });
    expect(next.totals.tripsLoaded).toBe(1);
    const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    try {
      const res = await api.app.inject({
        method: 'GET',
        url: '/v1/org-user/keeper/trips?limit=100&startTime=2026-11-01&endTime=2026-11-30',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode).toBe(200);
      expect((res.json() as { trips: { tripId: string }[] }).trips.map((t) => t.tripId).sort()).toEqual(
        [...keeperTrips, 'trip-keeper-p4-d'].sort(),
      );
    } finally {
      await api.close();
    }
  });
});

// The purge acts on the deleted account (its platformUserId), never on a new account made later
// for the same orgUserId (docs/decisions.md, Deletion): that account's files keep the orgUserId.
describe('erasure and a new account for the same orgUserId', () => {
  let fresh: Workspace;
  let gone = 0;
  let comeback = 0;
  const ORG = 'org-comeback-v5n1';
  const goneTrip = 'trip-gone-w2k8-a';
  const backTrip = 'trip-back-w2k8-a';
  const line = (tripId: string, userId: number, device: string, day: number) =>
    JSON.stringify(
      tripRecord({
        appId: fresh.appId,
        tripId,
        userId,
        orgUserId: ORG,
        start: `2026-11-${day}T08:00:00+01:00`,
        seconds: 600,
        extra: { deviceId: device },
      }),
    );

  beforeAll(async () => {
    fresh = await workspace('Europe/Berlin');
    const apiKey = (await new AppStore(fresh.paths.appsFile).rotateKey(fresh.appId)).apiKey;
    const auth = { authorization: `Bearer ${apiKey}` };
    const api = await createApi({ dataDir: fresh.dir, now: () => clock, pollMs: 50 });
    try {
      gone = (await api.app.inject({ method: 'POST', url: `/v1/org-user/${ORG}/token`, headers: auth })).json()
        .platformUserId;
      mkdirSync(fresh.paths.landingDir, { recursive: true });
      writeFileSync(join(fresh.paths.landingDir, 'day1.ndjson'), line(goneTrip, gone, 'device-gone-w2k8', 18));
      await runLoad({ dataDir: fresh.dir, now: clock });
      expect((await api.app.inject({ method: 'DELETE', url: `/v1/org-user/${ORG}`, headers: auth })).statusCode).toBe(
        200,
      );
      comeback = (await api.app.inject({ method: 'POST', url: `/v1/org-user/${ORG}/token`, headers: auth })).json()
        .platformUserId;
    } finally {
      await api.close();
    }
    // the new account's first trip and the purge of the old one meet in one load
    writeFileSync(join(fresh.paths.landingDir, 'day2.ndjson'), line(backTrip, comeback, 'device-back-w2k8', 19));
    const result = await runLoad({ dataDir: fresh.dir, now: clock });
    expect(result.purged.users).toBe(1);
  }, 120_000);
  afterAll(() => fresh?.cleanup());

  it("the deleted account's ids are gone; the new account's data is everywhere it belongs, with the orgUserId", () => {
    expect(comeback).not.toBe(gone);
    for (const id of [goneTrip, 'device-gone-w2k8']) expect(filesHolding(id, fresh.dir), id).toEqual([]);
    const kept = filesHolding(backTrip, fresh.dir);
    expect(kept).toEqual(
      expect.arrayContaining(['warehouse/warehouse.duckdb', 'published/slot-a.duckdb', 'published/slot-b.duckdb']),
    );
    expect(kept.some((f) => f.startsWith('landing/loaded/'))).toBe(true);
    expect(kept.some((f) => f.startsWith('events/pending/'))).toBe(true);
    // in the event files the orgUserId is in the old account's user.deleted and the new account's events
    const events = filesHolding(ORG, fresh.dir)
      .filter((f) => f.startsWith('events/pending/'))
      .flatMap((f) =>
        readFileSync(join(fresh.dir, f), 'utf8')
          .split('\n')
          .filter((l) => l.includes(ORG)),
      )
      .map((l) => JSON.parse(l) as { type: string; data: { userId: number; tripId?: string } })
      .map((e) => [e.type, e.data.userId, e.data.tripId ?? null]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['user.deleted', gone, null],
        ['trip.created', comeback, backTrip],
      ]),
    );
    expect(events.filter(([type, userId]) => userId === gone && type !== 'user.deleted')).toEqual([]);
  });
});
