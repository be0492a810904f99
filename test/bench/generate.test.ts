import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/open.js';
import { query, quoteLiteral } from '../../src/db/sql.js';
import { generateTrips, type GenerateOptions, type GenerateSummary } from '../../src/generate/generate.js';

const ZONE = 'Europe/Berlin';
const APP = 'app-gen';
const EVENT_TYPES = [
  'brake',
  'throttle',
  'corner_left',
  'corner_right',
  'speeding',
  'phone_call',
  'phone_usage',
  'night_driving',
  'tired_driving',
];
const RECORD_REASONS = [
  'invalid_json',
  'not_an_object',
  'missing_app_id',
  'unknown_app',
  'invalid_platform_user_id',
  'missing_org_user_id',
  'missing_trip_id',
  'invalid_os',
  'invalid_coordinate',
  'invalid_start_time',
  'invalid_end_time',
  'time_out_of_range',
];

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gen-test-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function users(n: number) {
  return Array.from({ length: n }, (_, i) => ({ orgUserId: `driver-${i + 1}`, platformUserId: 4_000_000 + i * 7919 }));
}

function options(overrides: Partial<GenerateOptions>): GenerateOptions {
  return {
    outDir: tempDir(),
    appId: APP,
    timeZone: ZONE,
    users: users(3),
    days: 3,
    endDate: '2026-11-20',
    seed: 1,
    format: 'ndjson',
    badRecords: false,
    ...overrides,
  };
}

type Json = Record<string, unknown>;
type Point = { t: unknown; lat: unknown; lng: unknown; speed: unknown };
type Event = { type: string; startTime?: string; endTime?: string; startPoint?: unknown; endPoint?: unknown };

// --- the loader's rules (docs/decisions.md, "Trip records"), restated so the generator's claims can be checked -------
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$/;
function instant(v: unknown): number | null {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && ISO.test(v)) return Date.parse(v);
  return null;
}
function recordReason(line: string): string | null {
  let r: unknown;
  try {
    r = JSON.parse(line);
  } catch {
    return 'invalid_json';
  }
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'not_an_object';
  const o = r as Json;
  if (typeof o['appId'] !== 'string' || o['appId'] === '') return 'missing_app_id';
  if (o['appId'] !== APP) return 'unknown_app';
  const id = o['platformUserId'];
  if (typeof id !== 'number' || !Number.isInteger(id) || id <= 0) return 'invalid_platform_user_id';
  if (typeof o['orgUserId'] !== 'string' || o['orgUserId'] === '') return 'missing_org_user_id';
  if (typeof o['tripId'] !== 'string' || o['tripId'] === '') return 'missing_trip_id';
  if (o['os'] !== 'android' && o['os'] !== 'ios') return 'invalid_os';
  if (o['coordinate'] != null && o['coordinate'] !== 'WGS84' && o['coordinate'] !== 'GCJ02')
    return 'invalid_coordinate';
  if (instant(o['startTime']) === null) return 'invalid_start_time';
  if (instant(o['endTime']) === null) return 'invalid_end_time';
  const times = [instant(o['startTime']) as number, instant(o['endTime']) as number];
  if (times.some((ms) => ms < Date.UTC(2000, 0, 1) || ms > Date.now() + 600_000)) return 'time_out_of_range';
  return null;
}
function pointReasons(r: Json): string[] {
  const start = instant(r['startTime']) as number;
  const end = instant(r['endTime']) as number;
  const seen = new Set<number>();
  const reasons: string[] = [];
  for (const p of r['points'] as Point[]) {
    const finite = [p.t, p.lat, p.lng, p.speed].every((v) => typeof v === 'number' && Number.isFinite(v));
    const t = p.t as number;
    if (!finite) reasons.push('non_finite');
    else if (Math.abs(p.lat as number) > 90 || Math.abs(p.lng as number) > 180) reasons.push('invalid_position');
    else if ((p.speed as number) < 0) reasons.push('negative_speed');
    else if (t < start - 60_000 || t > end + 60_000) reasons.push('time_out_of_range');
    else if (seen.has(t)) reasons.push('duplicate_time');
    else seen.add(t);
  }
  return reasons;
}
function eventReasons(r: Json): string[] {
  const reasons: string[] = [];
  for (const e of r['events'] as Event[]) {
    if (!e.startTime || !e.endTime || !e.startPoint || !e.endPoint) reasons.push('invalid_event');
    else if (!EVENT_TYPES.includes(e.type)) reasons.push('unknown_event_type');
    else if (Date.parse(e.endTime) < Date.parse(e.startTime)) reasons.push('event_time_inverted');
  }
  return reasons;
}
function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
/** The lines of a file that must end with one newline and hold no blank line. */
function lines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const all = text.slice(0, -1).split('\n');
  expect(all.every((l) => l.trim() !== '')).toBe(true);
  return all;
}

// The 4 users x 3 days each test below starts from, generated once per file: a run costs a DuckDB
// instance and its generator macros (about a second of CPU) whatever its size.
const generated = new Map<string, Promise<GenerateSummary>>();
const SMALL = { users: users(4), days: 3, badRecords: true };
function small(format: 'ndjson' | 'parquet', variant: 'parts' | 'whole' | 'seed 2'): Promise<GenerateSummary> {
  const key = `${format} ${variant}`;
  const overrides =
    variant === 'parts'
      ? { tripsPerPart: 3 }
      : variant === 'whole'
        ? { tripsPerPart: 1000 }
        : { tripsPerPart: 1000, seed: 2 };
  if (!generated.has(key)) generated.set(key, generateTrips(options({ ...SMALL, format, ...overrides })));
  return generated.get(key) as Promise<GenerateSummary>;
}

describe('generateTrips: determinism', () => {
  it('gives byte-identical files for the same options and different ones for another seed', async () => {
    for (const format of ['ndjson', 'parquet'] as const) {
      // the same options as the run whose bytes are pinned below (an earlier commit, another
      // process): this run's files must be those bytes, so a generator that drew anything unseeded
      // (a clock, Math.random, the order threads finish in) fails here as it would against a second run
      const a = await small(format, 'whole');
      const b = await small(format, 'parts');
      const c = await small(format, 'seed 2');
      expect(a.files.map((f) => basename(f))).toEqual(b.files.map((f) => basename(f)));
      expect(digest(a.files)).toBe(PINNED[format]);
      for (let i = 0; i < a.files.length; i++) {
        expect(readFileSync(a.files[i] as string).equals(readFileSync(b.files[i] as string))).toBe(true);
      }
      const differs = a.files.some((f, i) => !readFileSync(f).equals(readFileSync(c.files[i] as string)));
      expect(differs).toBe(true);
      expect({ ...a, files: [] }).toEqual({ ...b, files: [] });
    }
  });
});

/** SHA-256 of each file's bytes, by file name: what the files hold, whatever folder they are in. */
function hashes(files: string[]): Record<string, string> {
  return Object.fromEntries(
    files.map((f) => [basename(f), createHash('sha256').update(readFileSync(f)).digest('hex')]),
  );
}
// The digests of the files the generator wrote when it built every day's points at once (before
// it wrote them part by part), for the options of `small` (4 users x 3 days, bad records, seed 1).
const PINNED = {
  ndjson: '8fe76dc56c887ccb347ca52f9720154d3043a50590355e86656007f5da9f0b1f',
  parquet: '6b8c17c340ce0846cc296748df02cc18c461ebed9d21e2fa19b6ef64ee9df0aa',
};
const digest = (files: string[]): string =>
  createHash('sha256')
    .update(
      Object.entries(hashes(files))
        .map(([name, h]) => `${name} ${h}\n`)
        .join(''),
    )
    .digest('hex');

describe('generateTrips: streaming writes the bytes of the all-at-once generator', () => {
  // against PINNED, the all-at-once generator's bytes: streaming changed how it writes, not a byte
  for (const format of ['ndjson', 'parquet'] as const) {
    it(`${format}: a day in parts of 3 trips, in one part, and the pinned digest agree`, async () => {
      const parts = await small(format, 'parts');
      const whole = await small(format, 'whole');
      expect(hashes(parts.files)).toEqual(hashes(whole.files));
      expect(digest(parts.files)).toBe(PINNED[format]);
      expect({ ...parts, files: [] }).toEqual({ ...whole, files: [] });
      expect(parts.trips).toBe(20);
      // no part file is left beside the day files
      expect(readdirSync(dirname(parts.files[0] as string)).sort()).toEqual(parts.files.map((f) => basename(f)).sort());
    });
  }
});

describe('generateTrips: 20 users x 14 days across the October DST change', () => {
  let summary: GenerateSummary;
  let db: Database;
  let main: Json[];
  let bad: string[];
  const q = (sql: string) => query(db.connection, sql, { zone: ZONE });

  beforeAll(async () => {
    summary = await generateTrips(
      options({ users: users(20), days: 14, endDate: '2026-11-01', seed: 7, badRecords: true }),
    );
    db = await openDatabase(':memory:');
    const dayFiles = summary.files.filter((f) => basename(f).startsWith('trips-'));
    main = dayFiles.flatMap((f) => lines(f).map((l) => JSON.parse(l) as Json));
    bad = lines(summary.files.find((f) => basename(f) === 'bad-records.ndjson') as string);
    const list = `[${dayFiles.map(quoteLiteral).join(', ')}]`;
    const instantOf = (
      field: string,
    ) => `case json_type(${field}) when 'VARCHAR' then epoch_ms((${field}->>'$')::timestamptz)
      else (${field}->>'$')::bigint end`;
    await db.connection.run(`create table trips as
      select tripId, ${instantOf('startTime')} as start_ms, ${instantOf('endTime')} as end_ms, points, events
      from read_ndjson(${list}, columns = {tripId: 'VARCHAR', startTime: 'JSON', endTime: 'JSON',
        points: 'STRUCT(t BIGINT, lat DOUBLE, lng DOUBLE, speed DOUBLE)[]',
        events: 'STRUCT(type VARCHAR, startTime VARCHAR, endTime VARCHAR)[]'})`);
  });
  afterAll(() => db?.close());

  it('writes one file per local day plus the bad-records file', () => {
    const names = summary.files.map((f) => basename(f));
    expect(names).toHaveLength(15);
    expect(names[0]).toBe('trips-2026-10-19.ndjson');
    expect(names[13]).toBe('trips-2026-11-01.ndjson');
    expect(names[14]).toBe('bad-records.ndjson');
    expect(readdirSync(join(summary.files[0] as string, '..')).sort()).toEqual([...names].sort());
  });

  it('reports what the files hold', async () => {
    const good = bad.filter((l) => recordReason(l) === null).map((l) => JSON.parse(l) as Json);
    const [row] = await q(
      `select count(*) as trips, sum(len(points)) as points, sum(len(events)) as events from trips`,
    );
    expect(summary.trips).toBe(Number(row?.['trips']) + good.length);
    expect(summary.points).toBe(
      Number(row?.['points']) + good.reduce((n, r) => n + (r['points'] as unknown[]).length, 0),
    );
    expect(summary.events).toBe(
      Number(row?.['events']) + good.reduce((n, r) => n + (r['events'] as unknown[]).length, 0),
    );
    expect(summary.trips / (20 * 14)).toBeGreaterThan(1.2);
    expect(summary.trips / (20 * 14)).toBeLessThan(1.8);
    const ids = main.map((r) => r['tripId']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('writes main records that the loader keeps whole', () => {
    for (const r of main) {
      expect(recordReason(JSON.stringify(r))).toBeNull();
      expect(pointReasons(r)).toEqual([]);
      expect(eventReasons(r)).toEqual([]);
    }
  });

  it('writes at least two lines per record-level reason, each failing exactly there', () => {
    const reasons = bad.map(recordReason).filter((r): r is string => r !== null);
    expect(countBy(reasons)).toEqual(summary.badByReason);
    expect(summary.badLines).toBe(reasons.length);
    for (const reason of RECORD_REASONS) expect(summary.badByReason[reason]).toBeGreaterThanOrEqual(2);
  });

  it('counts exactly the points to drop and the events to quarantine in the bad file', () => {
    const good = bad.filter((l) => recordReason(l) === null).map((l) => JSON.parse(l) as Json);
    expect(good.length).toBeGreaterThan(0);
    expect(countBy(good.flatMap(pointReasons))).toEqual(summary.droppedPointsByReason);
    expect(countBy(good.flatMap(eventReasons))).toEqual(summary.quarantinedEventsByReason);
    for (const reason of ['non_finite', 'invalid_position', 'negative_speed', 'time_out_of_range', 'duplicate_time']) {
      expect(summary.droppedPointsByReason[reason]).toBeGreaterThan(0);
    }
    for (const reason of ['unknown_event_type', 'event_time_inverted', 'invalid_event']) {
      expect(summary.quarantinedEventsByReason[reason]).toBeGreaterThan(0);
    }
    for (const r of good) {
      expect((instant(r['endTime']) as number) - (instant(r['startTime']) as number)).toBeGreaterThanOrEqual(60_000);
      expect((r['points'] as unknown[]).length - pointReasons(r).length).toBeGreaterThanOrEqual(2);
    }
  });

  it('has every event type, phone intervals of tens of seconds, and some overlapping', async () => {
    const rows =
      await q(`select e.type, count(*) as n, min(epoch(e.endTime::timestamptz) - epoch(e.startTime::timestamptz)) as shortest
      from (select unnest(events) as e from trips) group by 1`);
    expect(rows.map((r) => r['type']).sort()).toEqual([...EVENT_TYPES].sort());
    const [overlap] = await q(`with e as (select tripId, unnest(events) as e from trips)
      select count(*) as n from e as a join e as b using (tripId)
      where a.e.type = 'phone_call' and b.e.type = 'phone_usage'
        and a.e.startTime::timestamptz < b.e.endTime::timestamptz and b.e.startTime::timestamptz < a.e.endTime::timestamptz`);
    expect(Number(overlap?.['n'])).toBeGreaterThan(0);
    const phone = rows.filter((r) => String(r['type']).startsWith('phone_'));
    for (const r of phone) expect(Number(r['shortest'])).toBeGreaterThanOrEqual(10);
  });

  it('places commutes, evening rush hour, weekend, night and midnight-crossing trips in local time', async () => {
    const [row] = await q(`with t as (
        select timezone($zone, to_timestamp(start_ms // 1000)) as s, timezone($zone, to_timestamp(end_ms // 1000)) as e
        from trips)
      select
        count(*) filter (where isodow(s) <= 5 and hour(s) between 7 and 8) as morning,
        count(*) filter (where isodow(s) <= 5 and s::time between '17:00' and '19:30') as evening_rush,
        count(*) filter (where isodow(s) >= 6) as weekend,
        count(*) filter (where hour(s) >= 22 or hour(s) < 4) as night,
        count(*) filter (where e::date > s::date) as crossing_midnight
      from t`);
    for (const key of ['morning', 'evening_rush', 'weekend', 'night', 'crossing_midnight']) {
      expect(Number(row?.[key]), key).toBeGreaterThan(0);
    }
  });

  it('builds about 2% abnormal trips and keeps the others plainly normal', async () => {
    const [row] = await q(`with m as (
        select tripId, start_ms, end_ms, len(points) as n,
          (select max(p.speed) from unnest(points) as u(p)) as max_speed,
          (select sum(2 * 6371008.8 * asin(sqrt(pow(sin(radians(b.lat - a.lat) / 2), 2)
              + cos(radians(a.lat)) * cos(radians(b.lat)) * pow(sin(radians(b.lng - a.lng) / 2), 2))))
           from (select points[i] as a, points[i + 1] as b from range(1, len(points)) as r(i))) as mileage
        from trips)
      select count(*) filter (where end_ms <= start_ms or n < 2 or max_speed > 69.5
                                 or end_ms - start_ms < 60000 or mileage < 100) as abnormal,
             count(*) filter (where end_ms <= start_ms) as inverted,
             count(*) filter (where n = 1) as one_point,
             count(*) as trips
      from m`);
    expect(Number(row?.['abnormal'])).toBe(summary.abnormalTrips);
    expect(summary.abnormalTrips).toBeGreaterThan(0);
    expect(summary.abnormalTrips / Number(row?.['trips'])).toBeLessThan(0.06);
  });

  it('samples points at 1 Hz within [startTime, endTime] with consistent speed and movement', async () => {
    const [row] = await q(`with p as (
        select tripId, start_ms, end_ms, unnest(points) as p from trips where end_ms - start_ms >= 60000 and len(points) > 1),
      d as (select *, p.t - lag(p.t) over w as dt,
          2 * 6371008.8 * asin(sqrt(pow(sin(radians(p.lat - lag(p.lat) over w) / 2), 2)
            + cos(radians(p.lat)) * cos(radians(lag(p.lat) over w)) * pow(sin(radians(p.lng - lag(p.lng) over w) / 2), 2))) as metres,
          lag(p.speed) over w as prev_speed
        from p window w as (partition by tripId order by p.t))
      select count(*) filter (where p.t < start_ms or p.t > end_ms) as outside,
             count(*) filter (where dt <= 0) as not_increasing,
             avg((dt = 1000)::int) as share_1hz,
             count(*) filter (where dt = 1000 and abs(metres - prev_speed) > 2.5 and prev_speed < 69) as inconsistent
      from d`);
    expect(Number(row?.['outside'])).toBe(0);
    expect(Number(row?.['not_increasing'])).toBe(0);
    expect(Number(row?.['share_1hz'])).toBeGreaterThan(0.99);
    expect(Number(row?.['inconsistent'])).toBe(0);
  });

  it('writes ISO times with the zone offset of their instant, and epoch milliseconds for some trips', () => {
    const iso = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toISO({ suppressMilliseconds: true });
    let epochTrips = 0;
    const offsets = new Set<string>();
    for (const r of main) {
      for (const field of ['startTime', 'endTime']) {
        const v = r[field];
        if (typeof v === 'number') epochTrips += field === 'startTime' ? 1 : 0;
        else {
          expect(v).toBe(iso(Date.parse(String(v))));
          offsets.add(String(v).slice(-6));
        }
      }
      for (const e of r['events'] as Event[]) expect(e.startTime).toBe(iso(Date.parse(String(e.startTime))));
    }
    expect([...offsets].sort()).toEqual(['+01:00', '+02:00']);
    expect(epochTrips / main.length).toBeGreaterThan(0.03);
    expect(epochTrips / main.length).toBeLessThan(0.2);
    const before = main.find(
      (r) => typeof r['startTime'] === 'string' && String(r['startTime']).startsWith('2026-10-24'),
    );
    const after = main.find(
      (r) => typeof r['startTime'] === 'string' && String(r['startTime']).startsWith('2026-10-26'),
    );
    expect(String(before?.['startTime'])).toMatch(/\+02:00$/);
    expect(String(after?.['startTime'])).toMatch(/\+01:00$/);
  });

  it('fixes os and coordinate per user', () => {
    const perUser = new Map<number, string>();
    for (const r of main) {
      const key = `${String(r['os'])}/${String(r['coordinate'])}/${String(r['deviceId'])}`;
      expect(perUser.get(r['platformUserId'] as number) ?? key).toBe(key);
      perUser.set(r['platformUserId'] as number, key);
    }
    expect(new Set(main.map((r) => r['os']))).toEqual(new Set(['android', 'ios']));
  });
});

describe('generateTrips: parquet', () => {
  it('writes the same fields and nesting as NDJSON, times as ISO strings', async () => {
    const seed = { users: users(5), days: 2, seed: 11 };
    const json = await generateTrips(options({ ...seed }));
    const parquet = await generateTrips(options({ ...seed, format: 'parquet', badRecords: true }));
    expect(parquet.files.map((f) => basename(f))).toEqual([
      'trips-2026-11-19.parquet',
      'trips-2026-11-20.parquet',
      'bad-records.ndjson',
    ]);
    const db = await openDatabase(':memory:');
    try {
      const files = (s: GenerateSummary, ext: string) =>
        `[${s.files
          .filter((f) => f.endsWith(ext))
          .map(quoteLiteral)
          .join(', ')}]`;
      const describeOf = async (sql: string) =>
        (await query(db.connection, `describe ${sql}`)).map((r) => [r['column_name'], r['column_type']]);
      const pq = await describeOf(`select * from read_parquet(${files(parquet, '.parquet')})`);
      const nd = await describeOf(`select * from read_ndjson(${files(json, '.ndjson')}, columns = {
        appId: 'VARCHAR', platformUserId: 'BIGINT', orgUserId: 'VARCHAR', tripId: 'VARCHAR', deviceId: 'VARCHAR',
        os: 'VARCHAR', coordinate: 'VARCHAR', isAutoStart: 'BOOLEAN', isAutoEnd: 'BOOLEAN', startTime: 'VARCHAR',
        endTime: 'VARCHAR', startPoi: 'VARCHAR', endPoi: 'VARCHAR',
        points: 'STRUCT(t BIGINT, lat DOUBLE, lng DOUBLE, speed DOUBLE, heading DOUBLE, accuracy DOUBLE)[]',
        events: 'STRUCT("type" VARCHAR, startTime VARCHAR, endTime VARCHAR, startPoint STRUCT(lat DOUBLE, lng DOUBLE), endPoint STRUCT(lat DOUBLE, lng DOUBLE), description VARCHAR)[]'})`);
      expect(pq).toEqual(nd);
      const keys = Object.keys(JSON.parse(lines(json.files[0] as string)[0] as string) as Json);
      expect(pq.map(([name]) => name)).toEqual(keys);
      const [row] = await query(
        db.connection,
        `select count(*) as n, sum(len(points)) as points,
          count(*) filter (where not regexp_full_match(startTime, '.*T.*[+-][0-9]{2}:[0-9]{2}')) as not_iso
        from read_parquet(${files(parquet, '.parquet')})`,
      );
      expect(Number(row?.['n'])).toBe(json.trips);
      expect(Number(row?.['points'])).toBe(json.points);
      expect(Number(row?.['not_iso'])).toBe(0);
    } finally {
      db.close();
    }
  });
});
