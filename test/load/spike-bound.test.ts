import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { installMacros } from '../../src/db/macros.js';

// is_position_spike skips the haversine when a cheap bound shows both legs below 250 km/h. The
// bound must never hide a spike: over a million random neighbourhoods (every speed from standing
// to far too fast, near the poles and across the antimeridian, repeated and reversed times) the
// macro agrees with the plain definition, the haversine of both legs.
let instance: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  await installMacros(conn);
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

describe('the position-spike bound', () => {
  it('agrees with the haversine definition on every neighbourhood', async () => {
    const reader = await conn.runAndReadAll(`
      with legs as (
        select
          setseed(0.42) is null as seeded, i,
          -- positions anywhere, most near each other; speeds around the 250 km/h line
          (random() * 180 - 90) * case when i % 7 = 0 then 1 else 0.999 end as lat,
          random() * 360 - 180 as lng,
          (random() - 0.5) * pow(10, -1 - random() * 4) * 5 as dlat1, (random() - 0.5) * pow(10, -1 - random() * 4) * 5 as dlng1,
          (random() - 0.5) * pow(10, -1 - random() * 4) * 5 as dlat2, (random() - 0.5) * pow(10, -1 - random() * 4) * 5 as dlng2,
          case when i % 11 = 0 then 0 when i % 13 = 0 then -1 else round(random() * 4, 3) end as dt1,
          case when i % 17 = 0 then 0 else round(random() * 4, 3) end as dt2
        from range(1000000) as r(i)
      ),
      points as (
        select
          timestamptz '2026-11-20 08:00:00+00' as t0,
          timestamptz '2026-11-20 08:00:00+00' + to_microseconds((dt1 * 1e6)::bigint) as t1,
          timestamptz '2026-11-20 08:00:00+00' + to_microseconds(((dt1 + dt2) * 1e6)::bigint) as t2,
          lat, lng, least(90, greatest(-90, lat + dlat1)) as lat1, ((lng + dlng1 + 540) % 360) - 180 as lng1,
          least(90, greatest(-90, lat + dlat1 + dlat2)) as lat2, ((lng + dlng1 + dlng2 + 540) % 360) - 180 as lng2
        from legs
      )
      select
        count(*) filter (where is_position_spike(t0, lat, lng, t1, lat1, lng1, t2, lat2, lng2)
          is distinct from coalesce(
            faster_than_plausible(haversine_m(lat, lng, lat1, lng1), epoch(t1) - epoch(t0))
            and faster_than_plausible(haversine_m(lat1, lng1, lat2, lng2), epoch(t2) - epoch(t1)), false)) as disagree,
        count(*) filter (where is_position_spike(t0, lat, lng, t1, lat1, lng1, t2, lat2, lng2)) as spikes,
        count(*) as checked
      from points`);
    const [disagree, spikes, checked] = reader.getRows()[0] as bigint[];
    expect(Number(checked)).toBe(1_000_000);
    expect(Number(disagree)).toBe(0);
    // both sides of the line are well represented
    expect(Number(spikes)).toBeGreaterThan(100_000);
    expect(Number(spikes)).toBeLessThan(900_000);
  });
});
