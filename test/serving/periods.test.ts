// statisticsPeriods (the serving pack's JS) against models/marts/statistics_periods.sql, row for row at
// full precision, on random daily rows of one user: gaps, zero-mileage days with trips, every
// period type, ranges starting mid-week and mid-month, across year ends and leap days.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { installMacros } from '../../src/db/macros.js';
import { queryFile, run } from '../../src/db/sql.js';
import { epochDay, isoDate, statisticsPeriods, type DayStats, type Period } from '../../src/serving/periods.js';

let instance: DuckDBInstance;
let conn: DuckDBConnection;
const days: DayStats[] = [];

// a small deterministic generator, so a failure names a reproducible case
let seed = 12345;
const random = (): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  await installMacros(conn);
  await run(
    conn,
    `create table stats_daily (app_id varchar, user_id bigint, stat_date date, count_trips integer, mileage_m bigint,
    duration_s bigint, count_events bigint, max_speed_kmh double, score_x_mileage double, score_sum double, version bigint)`,
  );
  for (let day = epochDay('2023-12-01'); day <= epochDay('2025-03-31'); day++) {
    if (random() < 0.35) continue;
    const trips = 1 + Math.floor(random() * 4);
    const mileage = random() < 0.1 ? 0 : Math.floor(random() * 90_000);
    const d: DayStats = {
      day,
      countTrips: trips,
      mileageM: mileage,
      durationS: mileage === 0 ? Math.floor(random() * 50) : 60 + Math.floor(random() * 7200),
      countEvents: Math.floor(random() * 9),
      maxSpeedKmh: random() * 160,
      scoreXMileage: mileage * (40 + random() * 60),
      scoreSum: trips * (40 + random() * 60),
    };
    days.push(d);
    await run(
      conn,
      'insert into stats_daily values ($app, 7, $date::date, $trips, $mileage, $duration, $events, $max, $sxm, $ssum, 1)',
      {
        app: 'app',
        date: new Date(day * 86_400_000).toISOString().slice(0, 10),
        trips: d.countTrips,
        mileage: d.mileageM,
        duration: d.durationS,
        events: d.countEvents,
        max: d.maxSpeedKmh,
        sxm: d.scoreXMileage,
        ssum: d.scoreSum,
      },
    );
  }
});
afterAll(() => {
  conn?.closeSync();
  instance?.closeSync();
});

describe('statisticsPeriods', () => {
  it('equals the SQL mart for every period type over 60 random ranges', async () => {
    const first = epochDay('2023-11-20');
    let periods = 0;
    for (let n = 0; n < 60; n++) {
      const start = first + Math.floor(random() * 480);
      const end = start + Math.floor(random() * 120);
      const iso = (d: number) => new Date(d * 86_400_000).toISOString().slice(0, 10);
      for (const period of ['day', 'week', 'month'] as Period[]) {
        const sql = await queryFile(conn, 'models/marts/statistics_periods', {
          app_id: 'app',
          user_id: 7,
          period,
          start_date: iso(start),
          end_date: iso(end),
        });
        const js = statisticsPeriods(days, period, iso(start), iso(end));
        expect(js.map((r) => ({ ...r, score: undefined }))).toEqual(sql.map((r) => ({ ...r, score: undefined })));
        // sums of doubles in another order may differ in the last bits
        js.forEach((r, i) => expect(r['score'] as number).toBeCloseTo(Number(sql[i]?.['score']), 9));
        periods += js.length;
      }
    }
    expect(periods).toBeGreaterThan(2000);
  });

  it('formats every day from 1900 to 2200 as Date does, and reads it back', () => {
    for (let day = epochDay('1900-01-01'); day <= epochDay('2200-12-31'); day++) {
      const expected = new Date(day * 86_400_000).toISOString().slice(0, 10);
      if (isoDate(day) !== expected || epochDay(expected) !== day) expect([day, isoDate(day)]).toEqual([day, expected]);
    }
  });
});
