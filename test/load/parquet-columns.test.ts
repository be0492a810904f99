// A Parquet file whose columns are not the record format's is set aside with a reason that names
// each missing or mistyped column and what the format expects (not DuckDB's binder message), and
// the other files load; a file with every column, whatever its scalar types, loads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const now = new Date('2026-11-21T09:00:00Z');
let ws: Workspace;

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
});
afterAll(() => ws.cleanup());

// every column of the record, typed as an SDK's Parquet writer would
const COLUMNS = `{
  appId: 'VARCHAR', platformUserId: 'BIGINT', orgUserId: 'VARCHAR', tripId: 'VARCHAR', deviceId: 'VARCHAR', os: 'VARCHAR',
  coordinate: 'VARCHAR', isAutoStart: 'BOOLEAN', isAutoEnd: 'BOOLEAN', startTime: 'VARCHAR', endTime: 'VARCHAR',
  startPoi: 'VARCHAR', endPoi: 'VARCHAR', points: 'STRUCT(t BIGINT, lat DOUBLE, lng DOUBLE, speed DOUBLE)[]',
  events: 'STRUCT(type VARCHAR, startTime VARCHAR, endTime VARCHAR, startPoint STRUCT(lat DOUBLE, lng DOUBLE), endPoint STRUCT(lat DOUBLE, lng DOUBLE), description VARCHAR)[]'
}`;

/** Writes `tripId`'s record as Parquet to the landing area, its columns as `select` makes them from `r` (the typed row). */
async function parquetFile(name: string, tripId: string, select: string): Promise<string> {
  const ndjson = writeNdjson(join(ws.dir, 'in', `${tripId}.ndjson`), [
    tripRecord({
      appId: ws.appId,
      userId: 7,
      orgUserId: 'driver-7',
      tripId,
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
      events: [{ type: 'brake', from: 100, to: 103 }],
    }),
  ]);
  mkdirSync(ws.paths.landingDir, { recursive: true });
  const file = join(ws.paths.landingDir, name);
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run(
      `copy (select ${select} from read_ndjson('${ndjson}', columns = ${COLUMNS}) as r) to '${file}' (format parquet)`,
    );
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return file;
}

describe('load: a Parquet file without the record format columns', () => {
  it('is set aside naming each missing or mistyped column and what is expected; the others load', async () => {
    await parquetFile('a-missing.parquet', 'missing', 'r.* exclude (os, startPoi, events)');
    await parquetFile(
      'b-mistyped.parquet',
      'mistyped',
      `r.* replace (
        to_json(r.points)::varchar as points,
        list_transform(r.events, e -> {'type': e.type, 'startTime': e.startTime, 'endTime': e.endTime,
          'startPoint': 'here', 'endPoint': {'lat': e.endPoint.lat}, 'description': {'text': e.description}}) as events
      )`,
    );
    // the user id as a 32-bit integer and the point times as ISO text: other scalar types are read, values judged per record
    await parquetFile(
      'c-good.parquet',
      'good',
      `r.* replace (
        r.platformUserId::integer as platformUserId,
        list_transform(r.points, p -> {'t': strftime(make_timestamp(p.t * 1000), '%Y-%m-%dT%H:%M:%S.%gZ'), 'lat': p.lat, 'lng': p.lng, 'speed': p.speed}) as points
      )`,
    );
    const result = await runLoad({ dataDir: ws.dir, now });
    const reasons = {
      'a-missing.parquet':
        'not a trip-record Parquet file: missing column(s) os, startPoi, events (each field of a record is a column, NULL where absent)',
      'b-mistyped.parquet':
        'not a trip-record Parquet file: points is VARCHAR, expected a list of {t, lat, lng, speed}; ' +
        'events[].startPoint is VARCHAR, events[].endPoint has no lng, events[].description is a STRUCT, ' +
        'expected a list of {type, startTime, endTime, startPoint {lat, lng}, endPoint {lat, lng}, description}',
    };
    expect(Object.fromEntries(result.files.map((f) => [f.file.split('/').pop(), f.failed ?? null]))).toEqual({
      ...reasons,
      'c-good.parquet': null,
    });
    expect(result.totals.tripsLoaded).toBe(1);
    expect(result.totals.rejected).toEqual({});
    const failedDir = join(ws.paths.landingDir, 'failed', '2026-11-21');
    expect(readdirSync(failedDir).sort()).toEqual([
      'a-missing.parquet',
      'a-missing.parquet.reason.txt',
      'b-mistyped.parquet',
      'b-mistyped.parquet.reason.txt',
    ]);
    for (const [name, reason] of Object.entries(reasons))
      expect(readFileSync(join(failedDir, `${name}.reason.txt`), 'utf8')).toBe(`${reason}\n`);
  });
});
