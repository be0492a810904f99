// The bulk export writes Arrow and NDJSON straight from DuckDB's result columns (src/api/export/
// columns.ts, arrow.ts, ndjson.ts). Checked here against plain implementations: the columns
// against the client's own `getItem` values (nulls, strings inline and behind a pointer, multi-byte
// text, several chunks), and the bytes against those of row objects built as the trip detail
// builds them, serialised by JSON.stringify and by apache-arrow's builders (vectorFromArray).
// The serving pack's payload bytes (src/db/vector-read.ts, the same reads) are checked here too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordBatch, RecordBatchStreamWriter, Struct, makeData, vectorFromArray, type DataType } from 'apache-arrow';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBInstance } from '../../src/db/duckdb.js';
import { Columns } from '../../src/api/export/columns.js';
import { textPieces } from '../../src/db/vector-read.js';
import { EXPORT_SCHEMA, recordBatch } from '../../src/api/export/arrow.js';
import { ndjsonLines } from '../../src/api/export/ndjson.js';
import type { ExportBatch } from '../../src/api/export/trip-batches.js';
import { point, round } from '../../src/api/http/context.js';
import { brief } from '../../src/api/routes/trips.js';
import { tripListRow } from '../../src/api/read/rows.js';

let instance: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

const read = async (sql: string) => Columns.read(await conn.run(sql));
const rowsOf = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjects();

// 5,000 rows: three chunks of DuckDB's 2,048; every 7th value NULL; strings of 0-40 characters,
// some with 2-, 3- and 4-byte characters
const MIXED = `
  select
    case when i % 7 = 0 then null else repeat(chr((97 + i % 26)::integer), (i % 41)::integer) || case when i % 5 = 0 then 'Zürich €😀' else '' end end as t,
    case when i % 7 = 1 then null else (i * 1.5)::double end as d,
    case when i % 7 = 2 then null else i::bigint * 1000003 end as b,
    case when i % 7 = 3 then null else (i % 1000)::integer end as n,
    i % 3 = 0 as f
  from range(5000) as r(i)`;

describe('Columns', () => {
  it('reads every value as the client does, over several chunks: text, numbers (NULL as 0), flags', async () => {
    const columns = await read(MIXED);
    const rows = await rowsOf(MIXED);
    expect(columns.rowCount).toBe(5000);
    const number = (v: unknown) => (v === null ? 0 : Number(v));
    expect(columns.text('t')).toEqual(rows.map((r) => r['t']));
    expect([...columns.number('d')]).toEqual(rows.map((r) => number(r['d'])));
    expect([...columns.number('b')]).toEqual(rows.map((r) => number(r['b'])));
    expect([...columns.number('n')]).toEqual(rows.map((r) => number(r['n'])));
    expect(columns.flag('f')).toEqual(rows.map((r) => r['f']));
    expect(columns.text('t').filter((t) => t === null)).toHaveLength(715);
  });

  it('joins parts in order, and refuses a column the query has not', async () => {
    const a = await read('select i::varchar as s, i * 2 as x from range(3) as r(i)');
    const b = await read('select (i + 3)::varchar as s, (i + 3) * 2 as x from range(2) as r(i)');
    const joined = Columns.concat([a, b]);
    expect(joined.rowCount).toBe(5);
    expect(joined.text('s')).toEqual(['0', '1', '2', '3', '4']);
    expect([...joined.number('x')]).toEqual([0, 2, 4, 6, 8]);
    expect(() => joined.text('nope')).toThrow(/no column nope/);
  });
});

// 13 trips (not a multiple of 8: the bitmaps' last byte is partial): pois null on some, a trip
// without events, scores and speeds that round, an escaped character in a description
const TRIPS = `
  select
    'trip-' || lpad(i::varchar, 40, '0') as trip_id, 1000 + i as user_id, 'driver-' || i as org_user_id, 'device-ü' || i as device_id,
    case when i % 2 = 0 then 'ios' else 'android' end as os, 'finished' as status, case when i = 4 then 'gps "lost"' else '' end as abnormal_reason,
    (i % 4)::integer as count_events, 80 + i / 7 as score, (i * 123)::bigint as energy_g, (i * 1000)::bigint as mileage_m, (i * 60)::bigint as duration_s,
    (i * 3.14159)::double as avg_speed_kmh, (i * 7.777)::double as max_speed_kmh, 'wgs84' as coordinate, i % 3 = 0 as is_auto_start, i % 2 = 0 as is_auto_end,
    '2026-11-10 08:' || lpad(i::varchar, 2, '0') || ':00' as start_time, '2026-11-10 09:' || lpad(i::varchar, 2, '0') || ':00' as end_time,
    52.5 + i / 1000 as start_lat, 13.4 + i / 1000 as start_lng, 48.1 + i / 1000 as end_lat, 11.5 + i / 1000 as end_lng,
    case when i % 3 = 1 then null else 'Café ' || i end as start_poi, case when i % 4 = 2 then null else 'Gare ' || i end as end_poi
  from range(13) as r(i)`;
// each trip's events, by trip position (1-based) then served order, as models/serving/api_export_events.sql gives them
const EVENTS = `
  select t + 1 as trip_pos, case when k % 2 = 0 then 'hard_brake' else 'speeding' end as type,
    'line
break ' || t || '.' || k as description, 52.0 + k / 100 as start_lat, 13.0 + k / 100 as start_lng, 52.1 + k / 100 as end_lat, 13.1 + k / 100 as end_lng,
    '2026-11-10 08:3' || k || ':00' as start_time, '2026-11-10 08:4' || k || ':00' as end_time
  from range(13) as a(t), range(4) as b(k) where k < t % 4 order by t, k`;

async function batchOf(): Promise<ExportBatch> {
  const trips = await read(TRIPS);
  const events = await read(EVENTS);
  const counts = [...trips.number('count_events')];
  const eventOffsets = new Int32Array(counts.length + 1);
  counts.forEach((c, i) => (eventOffsets[i + 1] = (eventOffsets[i] as number) + c));
  return {
    length: trips.rowCount,
    trips,
    events,
    eventOffsets,
    eventOrder: Int32Array.from({ length: events.rowCount }, (_, i) => i),
  };
}

/** A trip as the trip list and detail serve it, with the user and the events: the plain implementation. */
async function plainTrips(): Promise<Record<string, unknown>[]> {
  const json = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  const events = await json(EVENTS);
  return (await json(TRIPS)).map((r, i) => ({
    ...brief(tripListRow(r)),
    orgUserId: String(r['org_user_id']),
    userId: Number(r['user_id']),
    abnormalReason: r['abnormal_reason'],
    os: r['os'],
    avgSpeedInKmh: round(r['avg_speed_kmh'], 2),
    maxSpeedInKmh: round(r['max_speed_kmh'], 2),
    coordinate: r['coordinate'],
    isAutoStart: r['is_auto_start'],
    isAutoEnd: r['is_auto_end'],
    events: events
      .filter((e) => Number(e['trip_pos']) === i + 1)
      .map((e) => ({
        startPoint: point(e['start_lat'], e['start_lng']),
        endPoint: point(e['end_lat'], e['end_lng']),
        type: e['type'],
        startTime: e['start_time'],
        endTime: e['end_time'],
        description: e['description'],
      })),
  }));
}

async function ipcBytes(batch: RecordBatch): Promise<Buffer> {
  const writer = new RecordBatchStreamWriter();
  writer.write(batch);
  writer.finish();
  return Buffer.from(await writer.toUint8Array());
}

describe('the export written from columns', () => {
  it('gives NDJSON equal byte for byte to JSON.stringify of the trip objects', async () => {
    const expected = (await plainTrips()).map((t) => `${JSON.stringify(t)}\n`).join('');
    expect([...ndjsonLines(await batchOf())].join('')).toBe(expected);
    expect(expected).toContain('"startPoi":"Café 0"');
    expect(expected).not.toContain('"startPoi":null');
  });

  it('gives Arrow IPC bytes equal to those of apache-arrow builders fed the trip objects', async () => {
    const trips = await plainTrips();
    const children = EXPORT_SCHEMA.fields.map(
      (f) =>
        vectorFromArray(
          trips.map((t) => (f.name === 'userId' ? BigInt(t['userId'] as number) : (t[f.name] ?? null))),
          f.type as DataType,
        ).data[0]!,
    );
    const plain = new RecordBatch(
      EXPORT_SCHEMA,
      makeData({ type: new Struct(EXPORT_SCHEMA.fields), length: trips.length, nullCount: 0, children }),
    );
    const built = recordBatch(await batchOf());
    expect(built.getChild('startPoi')?.nullCount).toBe(4);
    expect((await ipcBytes(built)).equals(await ipcBytes(plain))).toBe(true);
  });
});

// 5,000 rows, three chunks of 2,048: every 7th NULL; 0-40 characters, some ending in 'Zürich €😀'
const TEXTS = `
  select case when i % 7 = 0 then null
              else repeat(chr((97 + i % 26)::integer), (i % 41)::integer) || case when i % 5 = 0 then 'Zürich €😀' else '' end end as t
  from range(5000) as r(i)`;

describe('textPieces', () => {
  it('gives the UTF-8 bytes of the strings the client reads, in row order, -1 for NULL, and copies runs of adjacent strings at once', async () => {
    const result = await conn.run(TEXTS);
    let rows = 0;
    let inline = 0;
    let long = 0;
    let pieces = 0;
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const vector = chunk.getColumnVector(0);
      const text = textPieces(vector, chunk.rowCount);
      expect(text.lengths).toHaveLength(chunk.rowCount);
      const expected: Buffer[] = [];
      for (let i = 0; i < chunk.rowCount; i++) {
        const value = vector.getItem(i) as string | null;
        if (value === null) expect(text.lengths[i], `row ${rows + i}`).toBe(-1);
        else {
          const bytes = Buffer.from(value, 'utf8');
          expect(text.lengths[i], `row ${rows + i}: ${value}`).toBe(bytes.length);
          expected.push(bytes);
          if (bytes.length <= 12) inline++;
          else long++;
        }
      }
      expect(Buffer.concat(text.pieces).equals(Buffer.concat(expected))).toBe(true);
      pieces += text.pieces.length;
      rows += chunk.rowCount;
    }
    expect(rows).toBe(5000);
    // both kinds of string entry were read
    expect(inline).toBeGreaterThan(500);
    expect(long).toBeGreaterThan(2000);
    // long strings DuckDB keeps one after another come out in runs: fewer pieces than values
    expect(pieces).toBeLessThan(inline + long / 2);
  });
});
