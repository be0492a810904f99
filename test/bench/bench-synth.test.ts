// The benchmark's history synthesizer (sql/tools/bench): what it writes must be data the service could
// have loaded itself, or the benchmark measures something else. Every publish check passes (on the
// warehouse and the served slot), statistics are exactly the sums of the synthesized trips, events
// agree with their trips, and the jobs run on top of it without announcing the history again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/open.js';
import { installMacros } from '../../src/db/macros.js';
import { runChecks } from '../../src/warehouse/checks.js';
import { runScore } from '../../src/jobs/score.js';
import { synthesizeHistory, type SynthResult } from '../../bench/synthesize.js';
import { manifestOf, warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let synth: SynthResult;
const now = new Date('2026-11-21T08:00:00Z');
// platform ids as the passport hands them out: large, not sequential
const users = Array.from({ length: 40 }, (_, i) => ({
  orgUserId: `driver-${i + 1}`,
  platformUserId: 7_000_000_000_000 + i * 7919,
}));

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  // 21 days across the end of DST (2026-10-25 in Berlin): a 25-hour day is in the history
  synth = await synthesizeHistory({ dataDir: ws.dir, users, endDate: '2026-11-05', days: 21, seed: 3, now });
});
afterAll(() => ws?.cleanup());

describe('synthesized history', () => {
  it('writes plausible amounts: about 1.5 trips per user and day, several events per trip', () => {
    expect(synth.trips).toBeGreaterThan(40 * 21 * 1.1);
    expect(synth.trips).toBeLessThan(40 * 21 * 2);
    expect(synth.events / synth.trips).toBeGreaterThan(3);
    // the history batch, one version per scored history day (20), then the last day
    expect(synth.versions).toEqual([1, 22]);
  });

  it('passes every publish check, in the warehouse and in the served slot', async () => {
    for (const file of [ws.paths.warehouseFile, join(ws.paths.publishedDir, manifestOf(ws.paths)?.file as string)]) {
      const db = await openDatabase(file, { readOnly: true });
      try {
        await installMacros(db.connection);
        expect(await runChecks(db.connection, 0)).toEqual([]);
      } finally {
        db.close();
      }
    }
    expect(manifestOf(ws.paths)?.version).toBe(22);
  });

  it("has statistics equal to the sums of each user-day's normal trips, and no day without its row", async () => {
    const mismatches = await warehouseRows(
      ws.paths,
      `with sums as (
           select app_id, user_id, trip_date as stat_date, count(*) as count_trips, sum(mileage_m) as mileage_m,
                  sum(duration_s) as duration_s, sum(count_events) as count_events, max(max_speed_kmh) as max_speed_kmh,
                  sum(score * mileage_m) as score_x_mileage, sum(score) as score_sum
           from trips where is_normal group by all)
       select * from sums as t full join stats_daily as s using (app_id, user_id, stat_date)
       where s.count_trips is distinct from t.count_trips and not (s.count_trips = 0 and t.count_trips is null)
          or s.mileage_m <> t.mileage_m or s.duration_s <> t.duration_s or s.count_events <> t.count_events
          or s.max_speed_kmh <> t.max_speed_kmh or abs(s.score_x_mileage - t.score_x_mileage) > 1e-6
          or abs(s.score_sum - t.score_sum) > 1e-9`,
    );
    expect(mismatches).toEqual([]);
    const [days] = await warehouseRows(ws.paths, 'select count(*) as n from stats_daily');
    expect(Number(days?.['n'])).toBe(synth.userDays);
  });

  it('keeps each trip consistent with itself: events counted, factors within the trip, status and reason agreeing', async () => {
    const [row] = await warehouseRows(
      ws.paths,
      `select
           count(*) filter (where t.count_events <> coalesce(e.n, 0)) as bad_event_counts,
           count(*) filter (where greatest(t.distracted_seconds, t.evening_rush_seconds, t.weekday_seconds) > t.elapsed_seconds + 1e-6
                              or t.low_speed_seconds > t.driving_seconds or t.acc_over_1_seconds > t.driving_seconds) as bad_factors,
           count(*) filter (where t.trip_date <> timezone('Europe/Berlin', t.started_at)::date) as bad_dates,
           count(*) filter (where t.evening_rush_seconds > 0) as rush_trips,
           count(*) filter (where not t.is_normal and t.abnormal_reason <> 'too_short') as bad_abnormal
       from trips as t
       left join (select app_id, trip_id, count(*) as n from trip_events group by all) as e using (app_id, trip_id)`,
    );
    expect(row).toMatchObject({ bad_event_counts: '0', bad_factors: '0', bad_dates: '0', bad_abnormal: '0' });
    expect(Number(row?.['rush_trips'])).toBeGreaterThan(0);
  });

  it('holds the scores the nightly job would have left for every history day, by the real score step', async () => {
    const runs = await warehouseRows(
      ws.paths,
      'select min(evaluation_date)::varchar as first, max(evaluation_date)::varchar as last, count(*) as n from score_runs',
    );
    expect(runs[0]).toMatchObject({ first: '2026-10-17', last: '2026-11-05', n: '20' });
    const [scores] = await warehouseRows(
      ws.paths,
      'select count(*) as n, count(distinct evaluation_date) as days from safety_scores',
    );
    expect(Number(scores?.['days'])).toBe(20);
    expect(Number(scores?.['n'])).toBeGreaterThan(20 * 2 * 35);
  });

  it('scores and publishes on top of it, and the history is not announced as new trips or scores', async () => {
    const score = await runScore({ dataDir: ws.dir, date: '2026-11-06', now });
    expect(score.runs[0]?.users).toBe(40);
    expect(score.events.tripCreated).toBe(0);
    expect(score.events.safetyScoreUpdated).toBe(40);
    const [shares] = await warehouseRows(
      ws.paths,
      "select min(safety_score) as lo, max(safety_score) as hi, count(*) as n from safety_scores where evaluation_date = '2026-11-06'",
    );
    expect(Number(shares?.['n'])).toBe(80);
    expect(Number(shares?.['lo'])).toBeGreaterThan(0);
    expect(Number(shares?.['hi'])).toBeLessThanOrEqual(100);
  });
});
