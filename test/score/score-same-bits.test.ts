// A score is the same bits on every run: the same date scored again, with DuckDB's scan split among
// threads, gives every score row's values bit for bit as before, so the run finds no score changed
// and writes (and so publishes and announces) nothing. The trips fill more than two of DuckDB's
// 122,880-row groups, every driver in each: with two partial sums a driver's total is the same
// either way round, with three the order DuckDB's threads combine them in changed the last bit of
// a sum of doubles from run to run (smaller histories, 6,000 x 14 and 6,000 x 28 in two batches,
// two row groups, gave equal bits).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appsOf } from '../../src/jobs/data-dir.js';
import { openWarehouse, type Warehouse } from '../../src/warehouse/warehouse.js';
import { query } from '../../src/db/sql.js';
import { scoreDate } from '../../src/score/score-date.js';
import { synthesizeHistory } from '../../bench/synthesize.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const DATE = '2026-11-21';
const now = new Date('2026-11-21T06:00:00Z');
const DRIVERS = 6_000;
const ROW_GROUP = 122_880;

let ws: Workspace;
let wh: Warehouse;
let threadsBefore: string | undefined;

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const users = Array.from({ length: DRIVERS }, (_, i) => ({
    orgUserId: `driver-${i + 1}`,
    platformUserId: 9_000_000 + i * 13,
  }));
  await synthesizeHistory({ dataDir: ws.dir, users, endDate: '2026-11-20', days: 30, seed: 5, now, tripsOnly: true });
  // the suite runs DuckDB on one thread; the order of partial sums only varies with several
  threadsBefore = process.env['DRIVING_DUCKDB_THREADS'];
  process.env['DRIVING_DUCKDB_THREADS'] = '4';
  wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir), {});
});
afterAll(() => {
  wh?.close();
  if (threadsBefore === undefined) delete process.env['DRIVING_DUCKDB_THREADS'];
  else process.env['DRIVING_DUCKDB_THREADS'] = threadsBefore;
  ws?.cleanup();
});

/** The date's score rows, every value as stored (doubles compared as numbers: bit for bit). */
const scoreRows = () =>
  query(
    wh.conn,
    'select * exclude (evaluated_at, version) from safety_scores where evaluation_date = $d::date order by user_id, interval_days',
    { d: DATE },
  );

describe('a date scored again on several threads', () => {
  it('reads trips that fill more than two row groups', async () => {
    const [row] = await query(wh.conn, 'select count(*) as n from trips where is_normal');
    expect(Number(row?.['n'])).toBeGreaterThan(2 * ROW_GROUP);
  });

  it('gives the same bits and writes no row, time after time', async () => {
    const first = await scoreDate(wh, ws.appId, DATE, now);
    expect(first.users).toBe(DRIVERS);
    expect(first.rowsWritten).toBe(2 * DRIVERS);
    const before = await scoreRows();
    for (let run = 1; run <= 3; run++) {
      const again = await scoreDate(wh, ws.appId, DATE, new Date(now.getTime() + run * 3_600_000));
      expect({ run, written: again.rowsWritten, removed: again.rowsRemoved }).toEqual({ run, written: 0, removed: 0 });
    }
    expect(await scoreRows()).toEqual(before);
  });
});
