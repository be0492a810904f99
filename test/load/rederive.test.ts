// load.js --rederive: the stored derivation of every archived landing file is replaced by the
// current rules' (tampered values come back), idempotently; trips whose file is gone, or that a
// later file sent again, keep what they have. Real warehouse, landing area and publish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { openDatabase } from '../../src/db/open.js';
import { publishedRows, warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const loadedAt = new Date('2026-11-21T06:00:00Z');
const later = new Date('2026-11-22T06:00:00Z');
let ws: Workspace;

/** Everything a derivation decides, without the bookkeeping a re-derivation renews (batch, version, time, path). */
const TRIPS = 'select * exclude (batch_id, version, loaded_at, source_file) from trips order by trip_id';
const snapshot = async () => ({
  trips: await warehouseRows(ws.paths, TRIPS),
  events: await warehouseRows(ws.paths, 'select * exclude (version) from trip_events order by trip_id, event_index'),
  stats: await warehouseRows(ws.paths, 'select * exclude (version) from stats_daily order by user_id, stat_date'),
  quarantine: await warehouseRows(
    ws.paths,
    'select line_no, kind, reason, trip_id, raw from quarantine order by trip_id, line_no, kind',
  ),
  drops: await warehouseRows(
    ws.paths,
    'select reason, sum(count_points)::int as n from point_drops group by reason order by reason',
  ),
});

async function tamper(sql: string): Promise<void> {
  const db = await openDatabase(ws.paths.warehouseFile);
  try {
    await db.connection.run(sql);
  } finally {
    db.close();
  }
}

const archived = () => readdirSync(join(ws.paths.landingDir, 'loaded', '2026-11-21')).sort();

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const trip = (tripId: string, start: string, extra: Parameters<typeof tripRecord>[0]['extra'] = {}) =>
    tripRecord({ appId: ws.appId, tripId, start, seconds: 600, events: [{ type: 'brake', from: 60, to: 62 }], extra });
  const spiky = trip('spiky', '2026-11-19T08:00:00+01:00');
  const points = (spiky['points'] as { lng: number }[]).map((p, i) => (i === 300 ? { ...p, lng: p.lng + 1 } : p));
  writeNdjson(join(ws.paths.landingDir, 'day-1.ndjson'), [
    trip('plain', '2026-11-18T08:00:00+01:00'),
    { ...spiky, points },
    trip('resent', '2026-11-18T17:00:00+01:00'),
    trip('bad-os', '2026-11-18T18:00:00+01:00', { os: 'windows' }),
  ]);
  writeNdjson(join(ws.paths.landingDir, 'day-2.ndjson'), [
    trip('resent', '2026-11-20T17:00:00+01:00'),
    trip('second', '2026-11-20T08:00:00+01:00'),
  ]);
  const loaded = await runLoad({ dataDir: ws.dir, now: loadedAt });
  expect(loaded.totals.pointsDropped).toEqual({ position_spike: 1 });
  expect(archived()).toEqual(['day-1.ndjson', 'day-2.ndjson']);
});
afterAll(() => ws.cleanup());

describe('load.js --rederive', () => {
  it('restores what the current rules derive from the archived files, and publishes it', async () => {
    const derived = await snapshot();
    // a stored derivation from older rules: the spike counted, other values off
    await tamper(`
      update trips set status = 'normal', abnormal_reason = '', mileage_m = 111000, count_points = 601 where trip_id = 'spiky';
      update trips set max_speed_kmh = 999, score = 1 where trip_id = 'plain';
      delete from trip_events where trip_id = 'second';
      update stats_daily set mileage_m = 0;
      delete from point_drops;
      delete from quarantine;`);
    expect((await snapshot()).trips).not.toEqual(derived.trips);

    const result = await runRederive({ dataDir: ws.dir, now: later });
    expect(result.totals).toEqual({
      files: 2,
      missing: 0,
      failed: 0,
      rederived: 4,
      changed: 2,
      heldElsewhere: 1,
      keptAsStored: 0,
    });
    expect(result.files.map((f) => [f.rederived, f.heldElsewhere])).toEqual([
      [2, 1],
      [2, 0],
    ]);
    expect(await snapshot()).toEqual(derived);
    // each trip's raw points once: the file's earlier Parquet files were replaced, not added to
    const points = await warehouseRows(
      ws.paths,
      `select trip_id, count(*)::int as n from read_parquet('${join(ws.paths.pointsDir, '*', '*.parquet')}') group by trip_id order by trip_id`,
    );
    expect(points).toEqual(derived.trips.map((t) => ({ trip_id: t['trip_id'], n: Number(t['count_points']) })));
    expect(result.publish.published).toBe(true);
    const served = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(served.find((t) => t['trip_id'] === 'spiky')).toMatchObject({
      status: 'normal',
      mileage_m: derived.trips.find((t) => t['trip_id'] === 'spiky')!['mileage_m'],
    });
  });

  it('is idempotent: a second run changes no derived value', async () => {
    const before = await snapshot();
    const again = await runRederive({ dataDir: ws.dir, now: later });
    expect(again.totals).toMatchObject({ files: 2, changed: 0 });
    expect(await snapshot()).toEqual(before);
  });

  it('reports a file whose archive is gone and leaves its trips as stored; a trip sent again later keeps the later copy', async () => {
    const before = await snapshot();
    rmSync(join(ws.paths.landingDir, 'loaded', '2026-11-21', 'day-2.ndjson'));
    // a value no check ties to others, so the publish stays possible
    await tamper("update trips set device_id = 'as stored' where trip_id in ('second', 'resent')");
    const result = await runRederive({ dataDir: ws.dir, now: later });
    expect(result.missing).toEqual([{ path: join(ws.paths.landingDir, 'day-2.ndjson'), loadedAt: expect.any(String) }]);
    expect(result.totals).toMatchObject({ files: 1, missing: 1, heldElsewhere: 1 });
    const trips = await warehouseRows(
      ws.paths,
      "select trip_id, device_id as d, started_at::varchar as s from trips where trip_id in ('second', 'resent') order by trip_id",
    );
    // day-1's copy of 'resent' (the 18th) does not come back over day-2's (the 20th)
    expect(trips).toEqual([
      { trip_id: 'resent', d: 'as stored', s: expect.stringContaining('2026-11-20') },
      { trip_id: 'second', d: 'as stored', s: expect.stringContaining('2026-11-20') },
    ]);
    expect((await snapshot()).quarantine).toEqual(before.quarantine);
  });

  it('runs from the command line with --since and --json, and refuses --input beside it', () => {
    const cli = spawnSync(
      process.execPath,
      ['jobs/load.js', '--rederive', '--since', '2026-11-21', '--json', '--data-dir', ws.dir],
      { encoding: 'utf8' },
    );
    expect(cli.status).toBe(0);
    const out = JSON.parse(cli.stdout);
    expect(out).toMatchObject({ ok: true, job: 'load', totals: { files: 1, missing: 1 } });
    expect(cli.stderr).toMatch(/archive gone, its trips keep their stored derivation/);
    const none = spawnSync(
      process.execPath,
      ['jobs/load.js', '--rederive', '--since', '2026-11-22', '--data-dir', ws.dir],
      { encoding: 'utf8' },
    );
    expect(none.stdout).toMatch(/^load: 0 file\(s\) re-derived, 0 not re-derivable/);
    const both = spawnSync(
      process.execPath,
      ['jobs/load.js', '--rederive', '--input', 'x.ndjson', '--data-dir', ws.dir],
      { encoding: 'utf8' },
    );
    expect(both.status).toBe(2);
    const badSince = spawnSync(
      process.execPath,
      ['jobs/load.js', '--rederive', '--since', 'yesterday', '--data-dir', ws.dir],
      { encoding: 'utf8' },
    );
    expect(badSince.status).toBe(2);
    expect(badSince.stderr).toMatch(/--since/);
  });
});

describe('load.js --rederive, a stored trip the current record rules reject', () => {
  it('keeps the trip as stored (a publish cannot retract it), does not quarantine it, and says so', async () => {
    const own = await workspace('Europe/Berlin');
    try {
      const clock = new Date('2026-11-21T06:00:00Z');
      // starts 5 minutes after the load's clock: within the 10 minutes allowed then
      const early = tripRecord({ appId: own.appId, tripId: 'early', start: '2026-11-21T07:05:00+01:00', seconds: 120 });
      writeNdjson(join(own.paths.landingDir, 'early.ndjson'), [early]);
      expect((await runLoad({ dataDir: own.dir, now: clock })).totals.tripsLoaded).toBe(1);
      // validated again by a clock an hour behind, the record lies in its future
      const result = await runRederive({ dataDir: own.dir, now: new Date(clock.getTime() - 3_600_000) });
      expect(result.files[0]).toMatchObject({ rederived: 0, keptAsStored: { time_out_of_range: 1 } });
      expect(result.totals.keptAsStored).toBe(1);
      expect(await warehouseRows(own.paths, 'select trip_id from trips')).toEqual([{ trip_id: 'early' }]);
      expect(await warehouseRows(own.paths, 'select * from quarantine')).toEqual([]);
      // its raw points stay too
      const points = await warehouseRows(
        own.paths,
        `select count(*)::int as n from read_parquet('${join(own.paths.pointsDir, '*', '*.parquet')}') where trip_id = 'early'`,
      );
      expect(points).toEqual([{ n: 121 }]);
      // and once only, however often it runs
      await runRederive({ dataDir: own.dir, now: new Date(clock.getTime() - 3_600_000) });
      expect(
        await warehouseRows(
          own.paths,
          `select count(*)::int as n from read_parquet('${join(own.paths.pointsDir, '*', '*.parquet')}') where trip_id = 'early'`,
        ),
      ).toEqual([{ n: 121 }]);
    } finally {
      own.cleanup();
    }
  });
});

describe('load.js --rederive killed with SIGKILL', () => {
  it('in the middle of the files, then run again, ends as an uninterrupted re-derivation', async () => {
    const own = await workspace('Europe/Berlin');
    const saved = ws;
    ws = own;
    try {
      for (let f = 0; f < 4; f++) {
        writeNdjson(
          join(own.paths.landingDir, `day-${f}.ndjson`),
          Array.from({ length: 20 }, (_, i) =>
            tripRecord({
              appId: own.appId,
              tripId: `f${f}-t${i}`,
              start: `2026-11-${String(10 + f).padStart(2, '0')}T${String(6 + (i % 12)).padStart(2, '0')}:00:00+01:00`,
              seconds: 300,
              events: i % 4 === 0 ? [{ type: 'brake', from: 30, to: 33 }] : [],
            }),
          ),
        );
      }
      await runLoad({ dataDir: own.dir, now: loadedAt });
      const derived = await snapshot();
      await tamper('update trips set max_speed_kmh = 1, score = 1; delete from point_drops');
      const killed = await new Promise<NodeJS.Signals | null>((resolve) => {
        const child = spawn(process.execPath, ['jobs/load.js', '--rederive', '--data-dir', own.dir]);
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('[2/4]')) child.kill('SIGKILL');
        });
        child.on('exit', (_code, signal) => resolve(signal));
      });
      expect(killed).toBe('SIGKILL');
      // run again in this process: the job's code without a Node start (the command line is above)
      const again = await runRederive({ dataDir: own.dir });
      expect(again.totals).toMatchObject({ files: 4, failed: 0 });
      expect(await snapshot()).toEqual(derived);
    } finally {
      ws = saved;
      own.cleanup();
    }
  });
});

describe('load.js --rederive, a file that cannot be derived again', () => {
  it('fails alone: it keeps what it has, the others are re-derived and published', async () => {
    const own = await workspace('Europe/Berlin');
    try {
      for (const [name, day] of [
        ['a.ndjson', '2026-11-17'],
        ['b.ndjson', '2026-11-18'],
      ]) {
        writeNdjson(join(own.paths.landingDir, name!), [
          tripRecord({ appId: own.appId, tripId: `t-${day}`, start: `${day}T08:00:00+01:00`, seconds: 300 }),
        ]);
      }
      await runLoad({ dataDir: own.dir, now: loadedAt });
      // the raw points of a.ndjson's day cannot be written again: a file stands where its folder was
      const { writeFileSync } = await import('node:fs');
      rmSync(join(own.paths.pointsDir, 'trip_date=2026-11-17'), { recursive: true });
      writeFileSync(join(own.paths.pointsDir, 'trip_date=2026-11-17'), 'in the way');
      const result = await runRederive({ dataDir: own.dir, now: later });
      expect(result.failed).toEqual([
        { path: join(own.paths.landingDir, 'loaded', '2026-11-21', 'a.ndjson'), error: expect.any(String) },
      ]);
      expect(result.totals).toMatchObject({ files: 1, failed: 1, rederived: 1 });
      expect(result.publish.published).toBe(true);
      const batches = await warehouseRows(own.paths, 'select kind, source from batches order by batch_id');
      expect(batches.map((b) => b['kind'])).toEqual(['load', 'load', 'rederive']);
    } finally {
      own.cleanup();
    }
  });
});
