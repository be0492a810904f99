// A file fails alone (docs/decisions.md): the checks that guard a publish judge each file's change
// where it is merged. A file whose change fails a check is rolled back whole, set aside in
// landing/failed/ with the check's name and an example row, counted in the summary, the job's
// metrics and /readyz, and every other file loads and publishes; the next load exits 0.
//
// The check is made to fail the way a faulty model would: a stored trip gets one event more than
// its event count (written straight into the warehouse). A correct file that makes the overlap rule
// judge that trip again carries it into the file's change, where events_have_trips sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { openDatabase } from '../../src/db/open.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, writeNdjson, warehouseRows, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { runJobProcess, type Ran } from '../helpers/job-process.js';
import { loadSummary } from '../../src/jobs/summaries.js';

let ws: Workspace;
let key: string;
let ids: Map<string, number>;
let ran: Ran;
const brake = (from: number) => ({ type: 'brake', from, to: from + 3 });
const trip = (org: string, tripId: string, start: string, events = [brake(100)]) =>
  tripRecord({ appId: ws.appId, tripId, userId: ids.get(org) as number, orgUserId: org, start, seconds: 600, events });

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  ids = await passport.ensureAccounts(ws.appId, ['u-1', 'u-2']);
  passport.close();
  // Y arrives after X and overlaps it: Y is overlapping_trip
  await runLoad({
    dataDir: ws.dir,
    now: new Date('2026-11-21T12:00:00Z'),
    inputs: [
      writeNdjson(join(ws.dir, 'in', 'base.ndjson'), [
        trip('u-1', 'X', '2026-11-20T08:00:00Z'),
        trip('u-1', 'Y', '2026-11-20T08:05:00Z'),
      ]),
    ],
  });
  // a second load: both slots hold everything, so the next publish copies only what changes
  await runLoad({
    dataDir: ws.dir,
    now: new Date('2026-11-21T12:01:00Z'),
    inputs: [writeNdjson(join(ws.dir, 'in', 'w.ndjson'), [trip('u-2', 'W', '2026-11-20T07:00:00Z')])],
  });
  const db = await openDatabase(ws.paths.warehouseFile);
  try {
    await db.connection.run(
      "insert into trip_events select * replace (99 as event_index) from trip_events where trip_id = 'Y'",
    );
  } finally {
    db.close();
  }
  // X moved away (Y becomes normal: judged again, with its extra event), and another driver's new trip
  writeNdjson(join(ws.paths.landingDir, 'a-corrected.ndjson'), [trip('u-1', 'X', '2026-11-20T06:00:00Z')]);
  writeNdjson(join(ws.paths.landingDir, 'b-new.ndjson'), [trip('u-2', 'Z', '2026-11-20T09:00:00Z')]);
  ran = await runJobProcess('load', ['--data-dir', ws.dir, '--json', '--metrics-dir', join(ws.dir, 'metrics')]);
});
afterAll(() => ws.cleanup());

describe('a file whose change fails a check', () => {
  it('is rolled back and set aside with the check and an example row; the run exits 2 and publishes the rest', async () => {
    expect(ran.code, ran.stderr).toBe(2);
    const day = readdirSync(join(ws.paths.landingDir, 'failed'))[0] as string;
    const failedDir = join(ws.paths.landingDir, 'failed', day);
    expect(readdirSync(failedDir).sort()).toEqual(['a-corrected.ndjson', 'a-corrected.ndjson.reason.txt']);
    const reason = readFileSync(join(failedDir, 'a-corrected.ndjson.reason.txt'), 'utf8');
    expect(reason).toContain('checks/events_have_trips');
    expect(reason).toContain('"trip_id":"Y"');
    expect(existsSync(join(ws.paths.landingDir, 'loaded', day, 'b-new.ndjson'))).toBe(true);
    // nothing of the failed file is kept: X where it was, Y still overlapping; Z loaded
    const rows = await warehouseRows(
      ws.paths,
      'select trip_id, started_at::varchar as s, abnormal_reason from trips order by trip_id',
    );
    expect(rows).toEqual([
      { trip_id: 'W', s: '2026-11-20 07:00:00+00', abnormal_reason: '' },
      { trip_id: 'X', s: '2026-11-20 08:00:00+00', abnormal_reason: '' },
      { trip_id: 'Y', s: '2026-11-20 08:05:00+00', abnormal_reason: 'overlapping_trip' },
      { trip_id: 'Z', s: '2026-11-20 09:00:00+00', abnormal_reason: '' },
    ]);
  });

  it("is counted in the summary, the job's metrics and /readyz", async () => {
    const result = JSON.parse(ran.stdout);
    expect(result.totals.filesFailed).toBe(1);
    expect(result.totals.filesFailedBy).toEqual({ 'checks/events_have_trips': 1 });
    expect(loadSummary(result)).toContain('files failed: checks/events_have_trips 1');
    const prom = readFileSync(join(ws.dir, 'metrics', 'driving_job_load.prom'), 'utf8');
    expect(prom).toContain('driving_job_files{job="load",outcome="failed"} 1');
    expect(prom).toContain('driving_job_files{job="load",outcome="loaded"} 1');
    expect(prom).toContain('driving_job_files_failed{job="load",reason="checks/events_have_trips"} 1');
    const api = await createApi({ dataDir: ws.dir, pollMs: 50 });
    try {
      const ready = (await api.app.inject({ method: 'GET', url: '/readyz' })).json();
      expect(ready.landing).toEqual({ waiting: 0, oldestWaitingSeconds: null, failed: 1, refused: 0 });
      // the other driver's trip is served
      const z = await api.app.inject({
        method: 'GET',
        url: '/v1/org-user/u-2/trips',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(z.json().trips.map((t: { tripId: string }) => t.tripId)).toEqual(['Z', 'W']);
    } finally {
      await api.close();
    }
  });

  it('leaves the next load with nothing to fail: it exits 0', async () => {
    const next = await runJobProcess('load', ['--data-dir', ws.dir]);
    expect(next.code, next.stderr).toBe(0);
  });
});

// A batch of SDK uploads mixes many drivers (and apps): one upload whose change fails a check must
// not set the others aside. The batch goes back into the landing area record by record; the next
// load takes them one at a time, and only the failing one is set aside.
describe('a batch of SDK uploads whose change fails a check', () => {
  let w: Workspace;
  const clock = new Date('2026-11-21T12:00:00Z');
  // the faulty model's stand-in: the staged trip 'BAD' counts one event more than it has
  const faulty = async (_file: string, conn: import('@duckdb/node-api').DuckDBConnection) => {
    await conn.run("update int_trips set count_events = count_events + 1 where trip_id = 'BAD'");
  };

  beforeAll(async () => {
    w = await workspace('UTC');
    const apiKey = (await new AppStore(w.paths.appsFile).rotateKey(w.appId)).apiKey;
    const api = await createApi({ dataDir: w.dir, now: () => clock, pollMs: 50 });
    try {
      for (const [user, tripId, hour] of [
        ['u-1', 'A', 6],
        ['u-2', 'BAD', 7],
        ['u-3', 'C', 8],
      ] as const) {
        const token = (
          await api.app.inject({
            method: 'POST',
            url: `/v1/org-user/${user}/token`,
            headers: { authorization: `Bearer ${apiKey}` },
          })
        ).json().token as string;
        const {
          appId: _a,
          platformUserId: _p,
          orgUserId: _o,
          ...record
        } = tripRecord({
          appId: w.appId,
          tripId,
          start: `2026-11-20T0${hour}:00:00Z`,
          seconds: 300,
          events: [{ type: 'brake', from: 60, to: 63 }],
        });
        const res = await api.app.inject({
          method: 'POST',
          url: '/v1/sdk/trips',
          headers: { authorization: `Bearer ${token}` },
          payload: record,
        });
        expect(res.statusCode).toBe(202);
      }
    } finally {
      await api.close();
    }
  });
  afterAll(() => w.cleanup());

  it('goes back into the landing area record by record, and the next load sets aside only the failing record', async () => {
    const first = await runLoad({ dataDir: w.dir, now: clock, afterStage: faulty });
    expect(first.uploadBatches?.uploads).toBe(3);
    expect(first.files).toHaveLength(1);
    expect(first.files[0]?.failed).toMatch(/checks\/events_have_trips.*its 3 records go back into the landing area/);
    expect(await warehouseRows(w.paths, 'select trip_id from trips')).toEqual([]);
    const pieces = readdirSync(w.paths.landingDir)
      .filter((n) => n.endsWith('.ndjson'))
      .sort();
    expect(pieces).toHaveLength(3);

    const second = await runLoad({ dataDir: w.dir, now: clock, afterStage: faulty });
    expect(second.files.map((f) => (f.failed === undefined ? 'loaded' : f.failedBy))).toEqual([
      'loaded',
      'checks/events_have_trips',
      'loaded',
    ]);
    expect(await warehouseRows(w.paths, 'select trip_id from trips order by trip_id')).toEqual([
      { trip_id: 'A' },
      { trip_id: 'C' },
    ]);
    expect(readdirSync(w.paths.landingDir).filter((n) => n.endsWith('.ndjson'))).toEqual([]);
    const day = readdirSync(join(w.paths.landingDir, 'failed'))[0] as string;
    const failed = readdirSync(join(w.paths.landingDir, 'failed', day));
    expect(failed.filter((n) => !n.endsWith('.reason.txt'))).toEqual([pieces[1]]);
  });
});
