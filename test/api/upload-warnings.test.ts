// An upload the service accepts but will not serve whole says so in its 202: a trip dated before
// the routes kept (DRIVING_POINTS_RETENTION_DAYS after the trip's date, its date in the app's
// zone) gets a route_beyond_retention warning, and after the load its route is indeed
// route_not_available while the trip is served; a trip a day later gets no warning and its route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

// 30 days of retention (the default) on the server's UTC day 2026-11-21: 2026-10-22 is the oldest
// date kept; New York is UTC-4 then, so 03:30Z on the 22nd is still the 21st there
const clock = new Date('2026-11-21T09:00:00Z');
let ws: Workspace;
let key: string;
let token: string;
let api: Awaited<ReturnType<typeof createApi>>;

const trip = (tripId: string, start: string) => tripRecord({ appId: 'ignored', tripId, start, seconds: 600 });
const upload = (payload: unknown) =>
  api.app.inject({
    method: 'POST',
    url: '/v1/sdk/trips',
    headers: { authorization: `Bearer ${token}` },
    payload: payload as object,
  });
const get = (url: string) => api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  ws = await workspace('America/New_York');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  token = (
    await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/late/token',
      headers: { authorization: `Bearer ${key}` },
    })
  ).json().token;
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('an upload older than the routes kept', () => {
  it('is accepted with a route_beyond_retention warning naming the retention; its trip is served without a route', async () => {
    const res = await upload([
      trip('recent', '2026-11-20T08:00:00Z'),
      { ...trip('refused', '2026-09-01T08:00:00Z'), os: 'windows' },
      trip('old', '2026-09-01T08:00:00Z'),
      trip('edge-beyond', '2026-10-22T03:30:00Z'),
      trip('edge-kept', '2026-10-22T04:30:00Z'),
    ]);
    expect(res.statusCode).toBe(202);
    const beyond = (tripDate: string) =>
      `the trip's date ${tripDate} (in the app's zone) is before 2026-10-22, the oldest date whose points and routes ` +
      "are kept (30 days before the server's date, 2026-11-21 UTC): the trip is served, its route never is (route_not_available)";
    expect(res.json()).toEqual({
      code: 0,
      message: 'accepted',
      accepted: 4,
      rejected: [{ index: 1, tripId: 'refused', reason: 'invalid_os' }],
      warnings: [
        { index: 2, tripId: 'old', warning: 'route_beyond_retention', retentionDays: 30, detail: beyond('2026-09-01') },
        {
          index: 3,
          tripId: 'edge-beyond',
          warning: 'route_beyond_retention',
          retentionDays: 30,
          detail: beyond('2026-10-21'),
        },
      ],
    });
    // an upload with nothing to warn of answers as before
    expect((await upload(trip('recent-2', '2026-11-20T10:00:00Z'))).json()).toEqual({
      code: 0,
      message: 'accepted',
      accepted: 1,
      rejected: [],
    });

    // what the warning said is what the service does
    await runLoad({ dataDir: ws.dir, now: clock });
    await api.ctx.snapshots.refresh();
    for (const [tripId, route] of [
      ['old', 404],
      ['edge-beyond', 404],
      ['edge-kept', 200],
      ['recent', 200],
    ] as const) {
      expect((await get(`/v1/org-user/late/trip/${tripId}`)).statusCode, tripId).toBe(200);
      const answer = await get(`/v1/org-user/late/trip/${tripId}/route`);
      expect(answer.statusCode, tripId).toBe(route);
      if (route === 404) expect(answer.body, tripId).toContain('route_not_available');
    }
  });
});
