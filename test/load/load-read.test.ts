// How a file is read: DuckDB's typed reader for well-formed NDJSON, line by line (in bounded
// ranges) when a line is malformed, and the same warehouse either way; the exact place of an
// unreadable byte or line.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { runLoad } from '../../src/jobs/load.js';
import { warehouseRows, workspace, workspaceLike, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('Europe/Berlin');
});
afterEach(() => ws.cleanup());

const now = new Date('2026-11-21T08:00:00Z');
// what a trip is, whichever file or line it came from
// where and when a record arrived, and the digest seeded by each warehouse's own secret, differ by file and warehouse
const TRIP = `select * exclude (source_file, source_line, file_key, batch_id, version, loaded_at, arrival_batch_id, arrival_line, content_hash) from trips order by trip_id`;
const EVENTS = `select * exclude (version) from trip_events order by trip_id, event_index`;
const QUARANTINE = `select line_no, kind, reason, trip_id, raw from quarantine order by line_no, kind`;

function records(n: number, prefix = 'r'): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) =>
    tripRecord({
      appId: ws.appId,
      tripId: `${prefix}-${i}`,
      userId: 1001 + (i % 3),
      orgUserId: `driver-${i % 3}`,
      start: `2026-11-${String(10 + (i % 9)).padStart(2, '0')}T0${i % 10}:30:00+01:00`,
      seconds: 120 + 7 * i,
      speed: (s) => 5 + ((s * (i + 1)) % 17),
      events: [
        { type: 'brake', from: 10, to: 12 },
        { type: 'phone_usage', from: 30, to: 60 },
      ],
    }),
  );
}

async function snapshot(): Promise<unknown[]> {
  return [
    await warehouseRows(ws.paths, TRIP),
    await warehouseRows(ws.paths, EVENTS),
    await warehouseRows(ws.paths, 'select * exclude (version) from stats_daily order by all'),
  ];
}

describe('load: reading NDJSON', () => {
  it('reads a well-formed file with the typed reader, keeping exact line numbers and the raw text of rejected lines', async () => {
    const good = records(4);
    const stranger = { ...good[0], tripId: 'stranger', appId: 'no-such-app' };
    // blank lines and CRLF endings move line numbers; only the rejected line's text is read again
    const text =
      [
        '',
        JSON.stringify(good[0]),
        '  ',
        JSON.stringify(stranger),
        JSON.stringify(good[1]),
        '',
        JSON.stringify(good[2]),
        JSON.stringify(good[3]),
      ].join('\r\n') + '\r\n';
    mkdirSync(join(ws.dir, 'in'), { recursive: true });
    writeFileSync(join(ws.dir, 'in', 'crlf.ndjson'), text);
    const result = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'in', 'crlf.ndjson')], now });
    expect(result.files[0]?.read).toBe('typed');
    expect(result.totals.rejected).toEqual({ unknown_app: 1 });
    expect(await warehouseRows(ws.paths, QUARANTINE)).toEqual([
      { line_no: '4', kind: 'record', reason: 'unknown_app', trip_id: 'stranger', raw: JSON.stringify(stranger) },
    ]);
    expect(
      (await warehouseRows(ws.paths, 'select trip_id, source_line from trips order by source_line')).map((r) => [
        r['trip_id'],
        Number(r['source_line']),
      ]),
    ).toEqual([
      ['r-0', 2],
      ['r-1', 5],
      ['r-2', 7],
      ['r-3', 8],
    ]);
  });

  it('reads the raw text of a rejected line from a gzip file', async () => {
    const [a, b] = records(2);
    const bad = { ...b, tripId: 'gz-bad', os: 'windows' };
    mkdirSync(join(ws.dir, 'in'), { recursive: true });
    const file = join(ws.dir, 'in', 'z.ndjson.gz');
    writeFileSync(file, gzipSync([a, bad, b].map((r) => JSON.stringify(r)).join('\n') + '\n'));
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(result.files[0]?.read).toBe('typed');
    expect(await warehouseRows(ws.paths, QUARANTINE)).toEqual([
      { line_no: '2', kind: 'record', reason: 'invalid_os', trip_id: 'gz-bad', raw: JSON.stringify(bad) },
    ]);
  });

  it('falls back to line by line for a malformed line and ends with the same warehouse as a clean file', async () => {
    const good = records(9);
    writeNdjson(join(ws.dir, 'clean', 'a.ndjson'), good);
    await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'clean', 'a.ndjson')], now });
    const clean = await snapshot();

    // the same app id, so the rows compare equal
    const other = await workspaceLike(ws);
    try {
      const lines: unknown[] = [...good.slice(0, 4), '{"appId": "trunc', 42, ...good.slice(4)];
      const file = writeNdjson(join(other.dir, 'in', 'b.ndjson'), lines);
      const result = await runLoad({ dataDir: other.dir, inputs: [file], now, parseBytes: 1 });
      expect(result.files[0]?.read).toBe('lines');
      expect(result.totals.rejected).toEqual({ invalid_json: 1, not_an_object: 1 });
      const [trips, events, stats] = clean as [Record<string, unknown>[], unknown, unknown];
      expect(await warehouseRows(other.paths, TRIP)).toEqual(trips);
      expect(await warehouseRows(other.paths, EVENTS)).toEqual(events);
      expect(await warehouseRows(other.paths, 'select * exclude (version) from stats_daily order by all')).toEqual(
        stats,
      );
      expect((await warehouseRows(other.paths, QUARANTINE)).map((r) => [r['line_no'], r['reason'], r['raw']])).toEqual([
        ['5', 'invalid_json', '{"appId": "trunc'],
        ['6', 'not_an_object', '42'],
      ]);
    } finally {
      other.cleanup();
    }
  });

  it('gives the same result for one file as for the same records split into small files', async () => {
    const all = records(12);
    writeNdjson(join(ws.dir, 'one', 'all.ndjson'), all);
    await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'one', 'all.ndjson')], now });
    const whole = await snapshot();
    // the same app id, so the rows compare equal
    const other = await workspaceLike(ws);
    try {
      const files = [0, 1, 2, 3].map((k) =>
        writeNdjson(join(other.dir, 'split', `part-${k}.ndjson`), all.slice(k * 3, k * 3 + 3)),
      );
      await runLoad({ dataDir: other.dir, inputs: files, now });
      const [trips, events, stats] = whole as [unknown, unknown, unknown];
      expect(await warehouseRows(other.paths, TRIP)).toEqual(trips);
      expect(await warehouseRows(other.paths, EVENTS)).toEqual(events);
      expect(await warehouseRows(other.paths, 'select * exclude (version) from stats_daily order by all')).toEqual(
        stats,
      );
    } finally {
      other.cleanup();
    }
  });
});

describe('load: a file of any size', () => {
  // A large file is derived a part of its records at a time (DRIVING_LOAD_POINTS_PER_PART): parts
  // of 100 points (every record larger than a part, so each is a part of its own) give exactly
  // the warehouse, the drops and the kept points of one statement, for NDJSON and for Parquet.
  it.each(['ndjson', 'parquet'] as const)('derives %s a part at a time exactly as at once', async (format) => {
    const all = records(9);
    // a spike, a repeated time and a point out of range in the first record
    const first = all[0] as { points: { t: number; lat: number; lng: number; speed: number }[] };
    const at = first.points[40] as { t: number; lat: number; lng: number; speed: number };
    first.points[40] = { ...at, lng: at.lng + 1 };
    first.points.push({ ...(first.points[41] as typeof at) }, { ...at, lat: 95 });
    const ndjson = writeNdjson(join(ws.dir, 'in', 'all.ndjson'), all);
    let file = ndjson;
    if (format === 'parquet') {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const db = await DuckDBInstance.create(':memory:');
      const conn = await db.connect();
      file = join(ws.dir, 'in', 'all.parquet');
      // every column of the record, typed as an SDK's Parquet writer would; absent ones NULL
      await conn.run(`copy (select * from read_ndjson('${ndjson}', columns = {
        appId: 'VARCHAR', platformUserId: 'BIGINT', orgUserId: 'VARCHAR', tripId: 'VARCHAR', deviceId: 'VARCHAR', os: 'VARCHAR',
        coordinate: 'VARCHAR', isAutoStart: 'BOOLEAN', isAutoEnd: 'BOOLEAN', startTime: 'VARCHAR', endTime: 'VARCHAR',
        startPoi: 'VARCHAR', endPoi: 'VARCHAR', points: 'STRUCT(t BIGINT, lat DOUBLE, lng DOUBLE, speed DOUBLE)[]',
        events: 'STRUCT(type VARCHAR, startTime VARCHAR, endTime VARCHAR, startPoint STRUCT(lat DOUBLE, lng DOUBLE), endPoint STRUCT(lat DOUBLE, lng DOUBLE), description VARCHAR)[]'
      })) to '${file}' (format parquet)`);
      conn.closeSync();
      db.closeSync();
    }
    const POINTS = `select * from read_parquet('${ws.paths.pointsDir}/**/*.parquet') order by all`;
    const once = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(once.totals.tripsLoaded, JSON.stringify(once.files[0])).toBe(9);
    const whole = [...(await snapshot()), await warehouseRows(ws.paths, POINTS)];
    // the same app id, so the rows compare equal
    const other = await workspaceLike(ws);
    try {
      const parted = await runLoad({ dataDir: other.dir, inputs: [file], now, pointsPerPart: 100 });
      expect(parted.totals.pointsDropped).toEqual(once.totals.pointsDropped);
      expect(once.totals.pointsDropped).toMatchObject({ duplicate_time: 1, position_spike: 1, invalid_position: 1 });
      const P = POINTS.replace(ws.paths.pointsDir, other.paths.pointsDir);
      const [trips, events, stats, points] = whole as [unknown, unknown, unknown, unknown];
      expect(await warehouseRows(other.paths, TRIP)).toEqual(trips);
      expect(await warehouseRows(other.paths, EVENTS)).toEqual(events);
      expect(await warehouseRows(other.paths, 'select * exclude (version) from stats_daily order by all')).toEqual(
        stats,
      );
      expect(await warehouseRows(other.paths, P)).toEqual(points);
    } finally {
      other.cleanup();
    }
  });
});

describe('load: files that cannot be read, and where', () => {
  it('names the byte and the line of invalid UTF-8', async () => {
    const [a, b] = records(2).map((r) => JSON.stringify(r));
    mkdirSync(join(ws.dir, 'in'), { recursive: true });
    const bad = Buffer.concat([
      Buffer.from(`${a}\n\n`),
      Buffer.from('{"appId":"é'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`"}\n${b}\n`),
    ]);
    writeFileSync(join(ws.dir, 'in', 'u.ndjson'), bad);
    const result = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'in', 'u.ndjson')], now });
    // line 3: `{"appId":"` is 10 bytes, é is two more, so the stray 0xc3 is byte 13
    expect(result.files[0]?.failed).toBe('invalid UTF-8 at byte 13 of line 3');
    expect(result.totals.tripsLoaded).toBe(0);
  });

  it('names a line longer than 32 MiB', async () => {
    const [a] = records(1).map((r) => JSON.stringify(r));
    mkdirSync(join(ws.dir, 'in'), { recursive: true });
    const long = `{"appId":"${'x'.repeat(32 * 1024 * 1024)}"}`;
    writeFileSync(join(ws.dir, 'in', 'long.ndjson'), `${a}\n${long}\n`);
    const result = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'in', 'long.ndjson')], now });
    expect(result.files[0]?.failed).toBe('line 2 longer than 32 MiB');
  });
});

describe('load: repeated times beside a spike', () => {
  it('judges a spike against the points left once repeats are dropped', async () => {
    const base = tripRecord({ appId: ws.appId, tripId: 'rep-spike', start: '2026-11-20T08:00:00+01:00', seconds: 300 });
    const points = (base['points'] as { t: number; lat: number; lng: number; speed: number }[]).map((p) => ({ ...p }));
    // second 100 jumps 1 degree east (a spike); a second delivery of second 100 sits on the road.
    // With the repeat taken as its successor (no time passes) the spike would stand; among the
    // points left its successor is second 101, so it is dropped.
    const at = points[100] as { t: number; lat: number; lng: number; speed: number };
    points[100] = { ...at, lng: at.lng + 1 };
    points.push({ ...at });
    const file = writeNdjson(join(ws.dir, 'in', 'rep.ndjson'), [{ ...base, points }, records(1)[0]]);
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(result.totals.pointsDropped).toEqual({ duplicate_time: 1, position_spike: 1 });
    const [row] = await warehouseRows(ws.paths, "select status, mileage_m from trips where trip_id = 'rep-spike'");
    expect(row?.['status']).toBe('normal');
    // the road only: 300 s at 12 m/s
    expect(Number(row?.['mileage_m'])).toBe(3600);
  });
});
