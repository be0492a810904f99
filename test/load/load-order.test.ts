// A load derives two files at once (each on its own connection) but merges them one at a time in
// input order. These runs hold it to the result of loading the same files one by one.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runGenerate } from '../../src/jobs/generate.js';
import {
  publishedRows,
  sameApps,
  warehouseRows,
  workspace,
  writeNdjson,
  type Workspace,
} from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const now = new Date('2026-11-21T08:00:00Z');
let spaces: Workspace[] = [];
beforeEach(() => {
  spaces = [];
});
afterEach(() => spaces.forEach((w) => w.cleanup()));

async function space(): Promise<Workspace> {
  const ws = await workspace('Europe/Berlin');
  spaces.push(ws);
  return ws;
}

/** Every table a load writes, in a stable order, without the columns that name the batch (or its warehouse). */
async function loadedState(ws: Workspace) {
  return {
    // content_hash is seeded by each warehouse's own secret: equal content, other digests
    trips: await warehouseRows(
      ws.paths,
      'select * exclude (batch_id, version, source_file, file_key, arrival_batch_id, content_hash) from trips order by app_id, trip_id',
    ),
    events: await warehouseRows(
      ws.paths,
      'select * exclude (version) from trip_events order by app_id, trip_id, event_index',
    ),
    // sums of doubles (a day's trip scores) depend on the order DuckDB's threads add them in, in
    // either kind of load: they agree to far more than the API's two decimals, not to the last bit
    stats: await warehouseRows(
      ws.paths,
      'select * exclude (version, score_sum, score_x_mileage), round(score_sum, 9) as score_sum, round(score_x_mileage, 6) as score_x_mileage from stats_daily order by app_id, user_id, stat_date',
    ),
    quarantine: await warehouseRows(ws.paths, 'select * exclude (batch_id, source_file) from quarantine order by all'),
    drops: await warehouseRows(
      ws.paths,
      'select reason, sum(count_points)::bigint as n from point_drops group by all order by all',
    ),
  };
}

describe('load: files derived two at a time, merged in order', () => {
  it('keeps input order: a later copy of a trip wins, an owner set earlier in the run holds, the same bytes twice load once', async () => {
    const ws = await space();
    const trip = (tripId: string, userId: number, org: string, start: string) =>
      tripRecord({ appId: ws.appId, tripId, userId, orgUserId: org, start, seconds: 600 });
    const dir = join(ws.dir, 'in');
    const first = writeNdjson(join(dir, '1.ndjson'), [
      trip('x', 1, 'a', '2026-11-20T08:00:00+01:00'),
      trip('y', 1, 'a', '2026-11-19T08:00:00+01:00'),
    ]);
    // user 2 claims x, which file 1 gave to user 1 in this same run; y is re-sent a day later
    const second = writeNdjson(join(dir, '2.ndjson'), [
      trip('x', 2, 'b', '2026-11-20T09:00:00+01:00'),
      trip('y', 1, 'a', '2026-11-20T10:00:00+01:00'),
    ]);
    const unreadable = join(dir, '3.ndjson.gz');
    writeFileSync(unreadable, 'not gzip');
    const again = join(dir, '4.ndjson');
    copyFileSync(first, again);
    const fourth = writeNdjson(join(dir, '5.ndjson'), [trip('z', 3, 'c', '2026-11-20T11:00:00+01:00')]);

    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [first, second, unreadable, again, fourth],
      now,
      concurrency: 2,
    });
    expect(
      result.files.map((f) => [
        f.file.split('/').pop(),
        f.skipped,
        f.failed === undefined ? null : 'failed',
        f.version,
      ]),
    ).toEqual([
      ['1.ndjson', false, null, 1],
      ['2.ndjson', false, null, 2],
      ['3.ndjson.gz', false, 'failed', null],
      ['4.ndjson', true, null, null],
      ['5.ndjson', false, null, 3],
    ]);
    expect(result.files[1]!.records).toEqual({ trip_id_taken: 1, loaded: 1 });
    expect(result.files[1]!.replaced).toBe(1);
    const trips = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(trips.map((t) => [t['trip_id'], t['org_user_id'], String(t['trip_date'])])).toEqual([
      ['x', 'a', '2026-11-20'],
      ['y', 'a', '2026-11-20'],
      ['z', 'c', '2026-11-20'],
    ]);
  });

  it('leaves the warehouse exactly as loading the files one at a time does', async () => {
    const serial = await space();
    const paired = sameApps(serial);
    spaces.push(paired);
    const gen = join(serial.dir, 'gen');
    // 8 users over 2 days (6 files with the re-sends and the bad records, derived in three pairs):
    // what is compared is the order of the files, not their size or number (each file a load reads
    // costs a fixed chain); every pair still holds a re-send that replaces or claims a trip of the file before it
    const generated = await runGenerate({
      dataDir: serial.dir,
      users: 8,
      days: 2,
      seed: 5,
      badRecords: true,
      endDate: '2026-11-20',
      out: gen,
    });
    // each day's file is followed by a re-send of it: every other trip again with another end POI
    // (it replaces the first copy), and one trip claimed by another user (taken by the first copy)
    const inputs: string[] = [];
    let claims = 0;
    for (const file of generated.files.filter((f) => f.endsWith('.ndjson')).sort()) {
      let claimed = false;
      const resent = readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => {
          let record: Record<string, unknown>;
          try {
            record = JSON.parse(line) as Record<string, unknown>;
          } catch {
            return [];
          }
          if (typeof record !== 'object' || record === null || typeof record['tripId'] !== 'string' || i % 2 === 1)
            return [];
          if (!claimed && typeof record['platformUserId'] === 'number') {
            claimed = true;
            claims++;
            return [JSON.stringify({ ...record, platformUserId: record['platformUserId'] + 1 })];
          }
          return [JSON.stringify({ ...record, endPoi: 'Elsewhere' })];
        });
      const copy = join(serial.dir, 'resent', file.split('/').pop() as string);
      mkdirSync(join(serial.dir, 'resent'), { recursive: true });
      writeFileSync(copy, resent.join('\n') + '\n');
      inputs.push(file, copy);
    }
    await runLoad({ dataDir: serial.dir, inputs, now, concurrency: 1 });
    const result = await runLoad({ dataDir: paired.dir, inputs, now, concurrency: 2 });
    expect(result.files.length).toBe(inputs.length);
    // one trip claimed by another user in each re-sent file
    expect(claims).toBe(inputs.length / 2);
    expect(result.totals.rejected['trip_id_taken']).toBe(claims);
    expect(result.totals.tripsReplaced).toBeGreaterThan(5);
    const a = await loadedState(serial);
    expect(a.trips.length).toBeGreaterThan(15);
    expect(a.quarantine.length).toBeGreaterThan(5);
    expect(await loadedState(paired)).toEqual(a);
  });

  it('replaces a trip that an earlier file of the same run wrote after this file was derived', async () => {
    const serial = await space();
    // the same app id in both workspaces, so the same files load the same way
    const paired = sameApps(serial);
    spaces.push(paired);
    const trip = (tripId: string, start: string, seconds: number) =>
      tripRecord({ appId: serial.appId, tripId, userId: 7, orgUserId: 'g', start, seconds });
    const dir = join(serial.dir, 'in');
    // file 1 is slower to derive (60 trips of 20 min; file 2 reads the last batch before file 1 can
    // merge whatever its size); file 2, derived beside it, re-sends its trip r
    const big = Array.from({ length: 60 }, (_, i) =>
      trip(
        `b${i}`,
        `2026-11-${String(1 + (i % 19)).padStart(2, '0')}T${String(6 + (i % 12)).padStart(2, '0')}:00:00+01:00`,
        1200,
      ),
    );
    const inputs = [
      writeNdjson(join(dir, '1.ndjson'), [...big, trip('r', '2026-11-19T20:00:00+01:00', 600)]),
      writeNdjson(join(dir, '2.ndjson'), [trip('r', '2026-11-20T07:30:00+01:00', 900)]),
    ];
    await runLoad({ dataDir: serial.dir, inputs, now, concurrency: 1 });
    const result = await runLoad({ dataDir: paired.dir, inputs, now, concurrency: 2 });
    expect(result.files.map((f) => f.replaced)).toEqual([0, 1]);
    const r = await warehouseRows(
      paired.paths,
      "select trip_date::varchar as d, duration_s::int as duration_s from trips where trip_id = 'r'",
    );
    expect(r).toEqual([{ d: '2026-11-20', duration_s: 900 }]);
    expect(await loadedState(paired)).toEqual(await loadedState(serial));
  });
});
