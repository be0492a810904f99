// The data routes' answers against the published rows themselves, through the serving pack and
// by SQL: each field of the trip list, the detail, the statistics and the score is the column it
// comes from (src/api/read/rows.ts converts each once: a BIGINT is a string in DuckDB's JSON rows
// and a number in the pack), so a column read into the wrong field, or not converted, shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/http/server.js';
import { berlinScored, FIXTURE_CLOCK } from '../helpers/fixtures.js';
import { publishedRows, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let key = '';
let trips: Record<string, unknown>[] = [];
let org = '';

const round = (v: unknown, places: number) => Math.round(Number(v) * 10 ** places) / 10 ** places;

beforeAll(async () => {
  ({
    ws,
    built: { key },
  } = await berlinScored());
  trips = await publishedRows(ws.paths, 'trips', 'org_user_id, started_at desc, trip_id desc');
  org = String(trips[0]?.['org_user_id']);
  trips = trips.filter((t) => t['org_user_id'] === org);
}, 180_000);
afterAll(() => ws?.cleanup());

describe.each(['pack', 'sql'] as const)('the data routes, answered from %s', (serving) => {
  let api: Awaited<ReturnType<typeof createApi>>;
  const get = async (url: string) => {
    const res = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  beforeAll(async () => {
    api = await createApi({ dataDir: ws.dir, now: () => FIXTURE_CLOCK, pollMs: 60_000, serving });
  });
  afterAll(async () => api?.close());

  it('lists the trips with each field from its column, and pages by the cursor', async () => {
    const body = await get(`/v1/org-user/${org}/trips?limit=100`);
    expect(body.trips.map((t: { tripId: string }) => t.tripId)).toEqual(trips.map((t) => t['trip_id']));
    for (const [i, t] of trips.entries()) {
      expect(body.trips[i]).toMatchObject({
        deviceId: t['device_id'],
        status: t['status'],
        eventCount: Number(t['count_events']),
        score: round(t['score'], 2),
        energy: Number(t['energy_g']),
        mileageInMeters: Number(t['mileage_m']),
        durationInSeconds: Number(t['duration_s']),
        startPoint: { lat: Number(t['start_lat']), lng: Number(t['start_lng']) },
      });
    }
    const first = await get(`/v1/org-user/${org}/trips?limit=1`);
    const second = await get(`/v1/org-user/${org}/trips?limit=1&nextCursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.trips[0].tripId).toBe(trips[1]?.['trip_id']);
  });

  it("gives a trip's detail with its events", async () => {
    const t = trips.find((r) => Number(r['count_events']) > 0) ?? (trips[0] as Record<string, unknown>);
    const { trip } = await get(`/v1/org-user/${org}/trip/${encodeURIComponent(String(t['trip_id']))}`);
    expect(trip).toMatchObject({
      abnormalReason: t['abnormal_reason'],
      avgSpeedInKmh: round(t['avg_speed_kmh'], 2),
      maxSpeedInKmh: round(t['max_speed_kmh'], 2),
      isAutoStart: t['is_auto_start'],
      energy: Number(t['energy_g']),
    });
    expect(trip.events).toHaveLength(Number(t['count_events']));
    for (const e of trip.events) expect(typeof e.startPoint.lat).toBe('number');
  });

  it('sums the statistics per day from the daily rows', async () => {
    const userId = Number(trips[0]?.['user_id']);
    const days = (await publishedRows(ws.paths, 'stats_daily', 'stat_date')).filter(
      (d) => Number(d['user_id']) === userId,
    );
    const body = await get(`/v1/org-user/${org}/statistics?type=day&startTime=2026-11-14&endTime=2026-11-19`);
    expect(body.statistics).toHaveLength(6);
    for (const s of body.statistics) {
      const day = days.find((d) => String(d['stat_date']) === s.startTime.slice(0, 10));
      expect(s).toMatchObject({
        mileageInMeters: Number(day?.['mileage_m'] ?? 0),
        eventCount: Number(day?.['count_events'] ?? 0),
        durationInSeconds: Number(day?.['duration_s'] ?? 0),
      });
    }
  });

  it('gives the latest score from its row', async () => {
    const userId = Number(trips[0]?.['user_id']);
    const [row] = (await publishedRows(ws.paths, 'safety_scores', 'evaluation_date desc')).filter(
      (r) => Number(r['user_id']) === userId && Number(r['interval_days']) === 30,
    );
    const { score } = await get(`/v1/org-user/${org}/safety-score?interval=30`);
    expect(score).toMatchObject({
      evaluationDate: String(row?.['evaluation_date']),
      safetyScore: round(row?.['safety_score'], 2),
      tripCount: Number(row?.['count_trips']),
      lowSpeed: round(row?.['low_speed'], 4),
    });
    const events = score.factors.find((f: { factor: string }) => f.factor === 'eventsPer100km');
    expect(events.value).toBe(round(row?.['events_per_100km'], 2));
  });
});
