// The publish checks (sql/checks) look only at rows written after a version, but a key written then
// must still be found twice when its other copy is older: the uniqueness checks join the written keys
// to the whole table. Shown on a loaded warehouse with a stray copy of a trip and of a statistics row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/open.js';
import { installMacros } from '../../src/db/macros.js';
import { runChecks } from '../../src/warehouse/checks.js';
import { runLoad } from '../../src/jobs/load.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;

beforeAll(async () => {
  ws = await workspace('UTC');
  writeNdjson(
    join(ws.paths.landingDir, 'day.ndjson'),
    ['t-1', 't-2'].map((tripId, i) =>
      tripRecord({ appId: ws.appId, tripId, start: `2026-11-20T0${8 + i}:00:00Z`, seconds: 300 }),
    ),
  );
  const loaded = await runLoad({ dataDir: ws.dir, now: new Date('2026-11-21T08:00:00Z') });
  expect(loaded.totals.tripsLoaded).toBe(2);
});
afterAll(() => ws?.cleanup());

describe('the uniqueness checks', () => {
  it('find a key written after the version twice when its other copy is older, and nothing before it', async () => {
    const db = await openDatabase(ws.paths.warehouseFile);
    try {
      const conn = db.connection;
      await installMacros(conn);
      const since = Number((await conn.runAndReadAll('select max(version) as v from trips')).getRowObjects()[0]?.v);
      expect(await runChecks(conn, 0)).toEqual([]);
      // a stray later copy of t-1 and of its user-day's statistics (what a faulty merge would leave)
      await conn.run(`insert into trips select * replace (${since + 1} as version) from trips where trip_id = 't-1'`);
      await conn.run(
        `insert into stats_daily select * replace (${since + 1} as version) from stats_daily where stat_date = date '2026-11-20'`,
      );
      const failures = await runChecks(conn, since);
      const byCheck = Object.fromEntries(failures.map((f) => [f.check, f.rows]));
      expect(byCheck['checks/trips_unique']).toEqual([
        expect.objectContaining({ app_id: ws.appId, trip_id: 't-1', copies: '2' }),
      ]);
      expect(byCheck['checks/stats_daily_unique']).toEqual([
        expect.objectContaining({ app_id: ws.appId, stat_date: '2026-11-20', copies: '2' }),
      ]);
      // rows written up to the version are not looked at again
      expect(await runChecks(conn, since + 1)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
