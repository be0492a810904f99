import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;
let otherKey: string;
let userId: number;
let clock = new Date('2026-11-21T09:00:00Z');

const get = (url: string, apiKey = key) =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const store = new AppStore(ws.paths.appsFile);
  key = (await store.rotateKey(ws.appId)).apiKey;
  otherKey = (await store.add({ name: 'other', timeZone: 'UTC' })).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  userId = (await passport.ensureAccounts(ws.appId, ['driver-1'])).get('driver-1') as number;
  passport.close();
  const trips = Array.from({ length: 45 }, (_, i) =>
    tripRecord({
      appId: ws.appId,
      tripId: `trip-${String(i).padStart(2, '0')}`,
      userId,
      orgUserId: 'driver-1',
      start: `2026-11-${String(1 + Math.floor(i / 3)).padStart(2, '0')}T0${7 + (i % 3)}:00:00+01:00`,
      seconds: 600,
      events: i % 5 === 0 ? [{ type: 'brake', from: 100, to: 103 }] : [],
    }),
  );
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), trips)], now: clock });
  await runScore({ dataDir: ws.dir, date: '2026-11-21', now: clock });
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('passport cache', () => {
  it('holds every active account from the start, so no first request waits for the store', async () => {
    const accounts = await api.ctx.passport.warmAccounts();
    expect(accounts).toBeGreaterThanOrEqual(1);
    expect(await api.ctx.passport.activeAccount(ws.appId, 'driver-1')).toBe(userId);
  });
});

describe('page cache', () => {
  it("reads the serving pack's indexes and rows into the page cache, and says so on /readyz", async () => {
    const manifest = api.ctx.snapshots.manifest;
    const names = Object.values(manifest?.pack?.files ?? {}).flat();
    expect(names.length).toBeGreaterThanOrEqual(3);
    const { statSync } = await import('node:fs');
    const bytes = names.reduce((sum, name) => sum + statSync(join(ws.paths.publishedDir, name)).size, 0);
    let state = '';
    for (let i = 0; i < 100 && state !== 'warm'; i++) {
      state = (await api.app.inject({ method: 'GET', url: '/readyz' })).json().pageCache;
      if (state !== 'warm') await new Promise((r) => setTimeout(r, 20));
    }
    expect(state).toBe('warm');
    // the figures stay inside the server (/readyz is unauthenticated: only the coarse state)
    const cache = api.ctx.snapshots.pageCache as Record<string, unknown>;
    // the events (extras) files are left to the cache by default: --pack-warm all reads them too
    expect(cache).toMatchObject({ state: 'warm', files: names.length, totalBytes: bytes, readBytes: bytes });
  });

  it('reads nothing with --pack-warm none', async () => {
    const cold = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 10_000, packWarm: 'none' });
    try {
      expect((await cold.app.inject({ method: 'GET', url: '/readyz' })).json().pageCache).toEqual('off');
      expect(cold.ctx.snapshots.pageCache).toEqual({ state: 'off' });
    } finally {
      await cold.close();
    }
  });
});

describe('trip list', () => {
  it('pages through every trip newest first with a cursor, then stops', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await get(`/v1/org-user/driver-1/trips?limit=20${cursor ? `&nextCursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ appId: ws.appId, userId, orgUserId: 'driver-1' });
      seen.push(...body.trips.map((t: { tripId: string }) => t.tripId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, i) => `trip-${String(44 - i).padStart(2, '0')}`));
  });

  it('shows local times, endTime, coordinates and the required fields', async () => {
    const body = (await get('/v1/org-user/driver-1/trips?limit=1')).json();
    expect(body.trips[0]).toMatchObject({
      tripId: 'trip-44',
      startTime: '2026-11-15 09:00:00',
      endTime: '2026-11-15 09:10:00',
      status: 'normal',
      durationInSeconds: 600,
    });
    expect(body.trips[0].startPoint).toEqual({ lng: 13.4, lat: 52.5 });
  });

  it('filters by start time with date-only bounds, both inclusive', async () => {
    const body = (await get('/v1/org-user/driver-1/trips?startTime=2026-11-02&endTime=2026-11-02')).json();
    expect(body.trips.map((t: { tripId: string }) => t.tripId)).toEqual(['trip-05', 'trip-04', 'trip-03']);
    expect(body.nextCursor).toBeUndefined();
  });

  it('answers 400 naming the parameter for bad limits, times and cursors', async () => {
    for (const [query, name] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=x', 'limit'],
      ['startTime=yesterday', 'startTime'],
      ['startTime=2026-11-05&endTime=2026-11-01', 'endTime'],
      ['nextCursor=forged.sig', 'nextCursor'],
      ['color=red', 'color'],
    ] as const) {
      const res = await get(`/v1/org-user/driver-1/trips?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ code: 40001, error: 'invalid_parameter' });
      expect(res.json().message.startsWith(`${name}:`), res.json().message).toBe(true);
    }
    const first = (await get('/v1/org-user/driver-1/trips?limit=5')).json();
    const mismatched = await get(
      `/v1/org-user/driver-1/trips?limit=5&startTime=2026-11-02&nextCursor=${first.nextCursor}`,
    );
    expect(mismatched.statusCode).toBe(400);
  });
});

describe('trip detail, statistics, score (operations 2-4)', () => {
  it('shows a trip with its events; an unknown trip is a 404', async () => {
    const body = (await get('/v1/org-user/driver-1/trip/trip-00')).json();
    expect(body.trip).toMatchObject({
      tripId: 'trip-00',
      os: 'android',
      coordinate: 'WGS84',
      isAutoStart: false,
      abnormalReason: '',
    });
    expect(body.trip.events).toEqual([
      expect.objectContaining({ type: 'brake', description: 'Hard braking', startTime: '2026-11-01 07:01:40' }),
    ]);
    expect((await get('/v1/org-user/driver-1/trip/nope')).json()).toMatchObject({ error: 'trip_not_found' });
  });

  it('gives dense, clipped periods whose sums equal the listed trips', async () => {
    const body = (
      await get('/v1/org-user/driver-1/statistics?type=week&startTime=2026-11-01&endTime=2026-11-30')
    ).json();
    expect(body.statistics.map((s: { startTime: string }) => s.startTime)).toEqual([
      '2026-11-01 00:00:00',
      '2026-11-02 00:00:00',
      '2026-11-09 00:00:00',
      '2026-11-16 00:00:00',
      '2026-11-23 00:00:00',
      '2026-11-30 00:00:00',
    ]);
    const total = body.statistics.reduce((a: number, s: { durationInSeconds: number }) => a + s.durationInSeconds, 0);
    expect(total).toBe(45 * 600);
    expect(body.statistics[5]).toMatchObject({ endTime: '2026-11-30 23:59:59', mileageInMeters: 0, score: 0 });
    expect((await get('/v1/org-user/driver-1/statistics?startTime=2026-01-01&endTime=2027-01-02')).statusCode).toBe(
      400,
    );
    expect((await get('/v1/org-user/driver-1/statistics?endTime=2026-01-02')).json().message).toMatch(/^startTime:/);
  });

  it('returns the latest score not after today with its factors; interval must be 30 or 90', async () => {
    const body = (await get('/v1/org-user/driver-1/safety-score?interval=30')).json();
    expect(body.score).toMatchObject({
      startTime: '2026-10-22 00:00:00',
      endTime: '2026-11-20 23:59:59',
      tripCount: 45,
    });
    expect(body.score.safetyScore).toBeGreaterThan(0);
    expect((await get('/v1/org-user/driver-1/safety-score?interval=7')).json().message).toMatch(/^interval:/);
  });
});

describe('passport and tenancy (operations 5, 6)', () => {
  it('issues tokens that resolve to their holder until they expire', async () => {
    const issued = (
      await api.app.inject({
        method: 'POST',
        url: '/v1/org-user/driver-1/token',
        headers: { authorization: `Bearer ${key}` },
      })
    ).json();
    expect(issued).toMatchObject({ code: 0, message: 'success', platformUserId: userId });
    expect((await get(`/v1/token/${issued.token}`)).json()).toEqual({ platformUserId: userId, orgUserId: 'driver-1' });
    expect((await get(`/v1/token/${issued.token}`, otherKey)).statusCode).toBe(404);
    const saved = clock;
    clock = new Date(saved.getTime() + 7 * 24 * 3600 * 1000 + 1000);
    try {
      expect((await get(`/v1/token/${issued.token}`)).json()).toMatchObject({ error: 'token_not_found' });
    } finally {
      clock = saved;
    }
  });

  it('creates an account for a new user when a token is issued', async () => {
    const issued = (
      await api.app.inject({
        method: 'POST',
        url: '/v1/org-user/newcomer/token',
        headers: { authorization: `Bearer ${key}` },
      })
    ).json();
    expect(issued.platformUserId).toBeGreaterThan(0);
    expect(issued.platformUserId).toBeLessThan(2 ** 53);
    expect((await get('/v1/org-user/newcomer/trips')).json().trips).toEqual([]);
  });

  it('hides another app’s users (404, never 403) and refuses calls without a valid key', async () => {
    expect((await get('/v1/org-user/driver-1/trips', otherKey)).json()).toMatchObject({
      code: 40401,
      error: 'user_not_found',
    });
    expect((await get('/v1/org-user/driver-1/trips', 'dk_wrong')).statusCode).toBe(401);
    const res = await api.app.inject({ method: 'GET', url: '/v1/org-user/driver-1/trips' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-request-id']).toBe(res.json().requestId);
  });

  it('answers unknown routes with route_not_found and documents itself', async () => {
    expect((await get('/v1/nowhere')).json()).toMatchObject({ error: 'route_not_found' });
    const doc = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/org-user/{org_user_id}/trips', '/v1/token/{token}']),
    );
    expect(doc.paths['/v1/sdk/trips'].post.security).toEqual([{ passportToken: [] }]);
    expect(doc.paths['/v1/org-user/{org_user_id}/trips'].get.security).toEqual([{ apiKey: [] }]);
  });
});

describe('account deletion', () => {
  it('stops tokens and data at once, purges on the next job run, and a new token makes a new account', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const issued = (await api.app.inject({ method: 'POST', url: '/v1/org-user/leaver/token', headers: auth })).json();
    const trips = [
      tripRecord({
        appId: ws.appId,
        tripId: 'leaver-1',
        userId: issued.platformUserId,
        orgUserId: 'leaver',
        start: '2026-11-10T08:00:00+01:00',
        seconds: 600,
      }),
    ];
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'leaver.ndjson'), trips)], now: clock });
    await api.ctx.snapshots.refresh();
    expect((await get('/v1/org-user/leaver/trips')).json().trips).toHaveLength(1);

    const deleted = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/leaver', headers: auth });
    expect(deleted.json()).toMatchObject({ code: 0, platformUserId: issued.platformUserId });
    expect((await get('/v1/org-user/leaver/trips')).json()).toMatchObject({ error: 'user_not_found' });
    expect((await get(`/v1/token/${issued.token}`)).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/leaver', headers: auth })).statusCode).toBe(
      404,
    );

    const purged = await runLoad({ dataDir: ws.dir, inputs: [], now: clock });
    expect(purged.purged).toMatchObject({ users: 1, trips: 1, pointFilesRewritten: 1 });
    const { warehouseRows, publishedRows } = await import('../helpers/workspace.js');
    expect(await warehouseRows(ws.paths, "select * from trips where org_user_id = 'leaver'")).toEqual([]);
    expect((await publishedRows(ws.paths, 'trips', 'trip_id')).filter((t) => t['org_user_id'] === 'leaver')).toEqual(
      [],
    );
    const { openDatabase } = await import('../../src/db/open.js');
    const { query } = await import('../../src/db/sql.js');
    const db = await openDatabase(':memory:');
    const left = await query(
      db.connection,
      "select count(*)::int as n from read_parquet($g) where trip_id = 'leaver-1'",
      { g: join(ws.paths.pointsDir, '**', '*.parquet') },
    );
    db.close();
    expect(left[0]?.['n']).toBe(0);

    const again = (await api.app.inject({ method: 'POST', url: '/v1/org-user/leaver/token', headers: auth })).json();
    expect(again.platformUserId).not.toBe(issued.platformUserId);
  });
});

describe('SDK upload', () => {
  it('lands valid records durably with the identity of the token, answers per record, and the load picks them up', async () => {
    const issued = (
      await api.app.inject({
        method: 'POST',
        url: '/v1/org-user/sdk-user/token',
        headers: { authorization: `Bearer ${key}` },
      })
    ).json();
    const good = tripRecord({
      appId: 'ignored',
      tripId: 'sdk-1',
      userId: 1,
      orgUserId: 'spoofed',
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
    });
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: `Bearer ${issued.token}` },
      payload: [
        good,
        { ...good, tripId: 'sdk-2', os: 'windows' },
        { ...good, tripId: 'sdk-3', startTime: '2026-11-20T08:00:00' },
      ],
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      accepted: 1,
      rejected: [
        { index: 1, tripId: 'sdk-2', reason: 'invalid_os' },
        { index: 2, reason: 'invalid_start_time' },
      ],
    });
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(ws.paths.landingDir).filter((n) => n.startsWith('sdk-'))).toHaveLength(1);

    const loaded = await runLoad({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.tripsLoaded).toBe(1);
    await api.ctx.snapshots.refresh();
    const trips = (await get('/v1/org-user/sdk-user/trips')).json();
    expect(trips).toMatchObject({ userId: issued.platformUserId, trips: [{ tripId: 'sdk-1' }] });
  });

  it('refuses an API key, a bad token, an empty or oversized upload', async () => {
    const post = (auth: string, payload: unknown) =>
      api.app.inject({
        method: 'POST',
        url: '/v1/sdk/trips',
        headers: { authorization: `Bearer ${auth}` },
        payload: payload as object,
      });
    expect((await post(key, {})).statusCode).toBe(401);
    expect((await post('pt_nope', {})).statusCode).toBe(401);
    const issued = (
      await api.app.inject({
        method: 'POST',
        url: '/v1/org-user/sdk-user/token',
        headers: { authorization: `Bearer ${key}` },
      })
    ).json();
    expect((await post(issued.token, [])).json().message).toMatch(/^body:/);
    expect((await post(issued.token, [{ tripId: 'x' }])).statusCode).toBe(400);
    expect(
      (
        await post(
          issued.token,
          Array.from({ length: 501 }, () => ({})),
        )
      ).statusCode,
    ).toBe(400);
  });
});

describe('passport under concurrency', () => {
  it('serves concurrent token requests for one new user with one account and no error', async () => {
    const results = await Promise.all(
      Array.from({ length: 25 }, () =>
        api.app.inject({
          method: 'POST',
          url: '/v1/org-user/rush-user/token',
          headers: { authorization: `Bearer ${key}` },
        }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(25).fill(200));
    expect(new Set(results.map((r) => r.json().platformUserId)).size).toBe(1);
    const holders = await Promise.all(results.map((r) => get(`/v1/token/${r.json().token}`)));
    expect(holders.every((h) => h.json().orgUserId === 'rush-user')).toBe(true);
  });
});

describe('hardening', () => {
  it('answers malformed URLs, long ids and empty JSON bodies in the ErrorResult shape', async () => {
    const bad = await get('/v1/org-user/%FF/trips');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 40001, error: 'invalid_parameter' });
    expect(bad.headers['x-request-id']).toBe(bad.json().requestId);
    expect((await get(`/v1/org-user/${'u'.repeat(200)}/trips`)).json()).toMatchObject({ error: 'user_not_found' });
    const empty = await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/driver-1/token',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    expect(empty.statusCode).toBe(200);
    // the token is checked before the body is read: a bad token is a 401 whatever the body
    const unread = await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(unread.json()).toMatchObject({ error: 'unauthorized' });
    const token = empty.json().token as string;
    const broken = await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(broken.json()).toMatchObject({ error: 'invalid_parameter', message: 'body: not valid JSON' });
  });

  it('treats an end bound as the whole second or day it names', async () => {
    const { parseQueryTime } = await import('../../src/api/http/query-time.js');
    expect(parseQueryTime('endTime', '2026-11-20 10:00:00', 'Europe/Berlin', 'end').toISOString()).toBe(
      '2026-11-20T09:00:01.000Z',
    );
    expect(parseQueryTime('endTime', '2026-11-20', 'Europe/Berlin', 'end').toISOString()).toBe(
      '2026-11-20T23:00:00.000Z',
    );
    expect(parseQueryTime('startTime', '2026-11-20', 'Europe/Berlin', 'start').toISOString()).toBe(
      '2026-11-19T23:00:00.000Z',
    );
    expect(parseQueryTime('endTime', '2026-11-20T10:00:00+01:00', 'UTC', 'end').toISOString()).toBe(
      '2026-11-20T09:00:00.001Z',
    );
  });
});
