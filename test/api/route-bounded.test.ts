import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { routesInProgress } from '../../src/api/geometry/route-work.js';
import type { ApiLimits } from '../../src/api/http/limits.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { simplifyIndexes } from '../../src/geo/douglas-peucker.js';
import { zigzag } from '../../bench/zigzag.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

// A route whose simplification is the worst case (a zig-zag: n²/2 distance evaluations) against
// the real server on a loopback port: other requests are answered while it is worked on, it is
// answered exactly once done, and past its budget it is a 503 busy with Retry-After. The work is
// counted (the server's slice and budget are set small), never timed.

const clock = new Date('2026-11-21T09:00:00Z');
const START = Date.parse('2026-11-20T07:00:00Z');
// more points than one chunk of the answer (4,096 positions): tolerance=0 is written in pieces
const N = 5000;
const trip = zigzag(N, START);

let ws: Workspace;
let key: string;
type Api = Awaited<ReturnType<typeof createApi>>;

async function serve(limits: Partial<ApiLimits>): Promise<{ api: Api; base: string }> {
  const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50, limits });
  return { api, base: await api.app.listen({ host: '127.0.0.1', port: 0 }) };
}

const get = (base: string, path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
const ROUTE = '/v1/org-user/driver-1/trip/zigzag/route';

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const userId = (await passport.ensureAccounts(ws.appId, ['driver-1'])).get('driver-1') as number;
  passport.close();
  const record = {
    appId: ws.appId,
    platformUserId: userId,
    orgUserId: 'driver-1',
    tripId: 'zigzag',
    os: 'ios',
    startTime: new Date(START).toISOString(),
    endTime: new Date(START + (N - 1) * 1000).toISOString(),
    points: trip,
  };
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), [record])], now: clock });
});

afterAll(() => ws?.cleanup());

describe('a route that is the worst case of the simplification', () => {
  it('lets /healthz and other requests be answered while it is worked on, then answers exactly the simplification', async () => {
    // about 11 M evaluations in slices of 2,000: some 5,500 turns of the event loop
    const { api, base } = await serve({ routeWorkSlice: 2_000, routeWorkBudget: 100_000_000 });
    try {
      const route = get(base, ROUTE).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
        inProgressAtEnd: routesInProgress(),
      }));
      // wait (in turns of the loop, bounded) until the server is working on it
      for (let turns = 0; routesInProgress() === 0; turns++) {
        if (turns > 100_000) throw new Error('the route never started');
        await nextTurn();
      }
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      const readyz = await fetch(`${base}/readyz`);
      expect(readyz.status).toBe(200);
      // both were answered while the route was still being worked on
      expect(routesInProgress()).toBe(1);
      const answered = await route;
      expect(answered.status).toBe(200);
      expect(answered.inProgressAtEnd).toBe(0);
      const expected = simplifyIndexes(
        trip.map((p) => p.lat),
        trip.map((p) => p.lng),
        5,
      );
      expect(expected.length).toBeGreaterThan(N / 2);
      expect(answered.body.route.properties.times).toEqual(expected.map((i) => trip[i]!.t));
      expect(answered.body.route.geometry.coordinates).toEqual(expected.map((i) => [trip[i]!.lng, trip[i]!.lat]));
    } finally {
      await api.close();
    }
  });

  it("holds a place of the service's gate while worked on: beyond the gate 503 overloaded, health probes still answered", async () => {
    const { api, base } = await serve({
      routeWorkSlice: 2_000,
      routeWorkBudget: 100_000_000,
      maxInFlight: 1,
      overloadRetryAfterSeconds: 5,
    });
    try {
      const route = get(base, ROUTE);
      for (let turns = 0; routesInProgress() === 0; turns++) {
        if (turns > 100_000) throw new Error('the route never started');
        await nextTurn();
      }
      const shed = await get(base, '/v1/org-user/driver-1/trips');
      expect(shed.status).toBe(503);
      expect(((await shed.json()) as any).error).toBe('overloaded');
      expect(shed.headers.get('retry-after')).toBe('5');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(routesInProgress()).toBe(1);
      expect((await route).status).toBe(200);
      expect((await get(base, '/v1/org-user/driver-1/trips')).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('answers 503 busy with Retry-After once its budget is spent, every time; tolerance=0 and a tolerance above the zig-zag still answer', async () => {
    const { api, base } = await serve({
      routeWorkSlice: 10_000,
      routeWorkBudget: 1_000_000,
      overloadRetryAfterSeconds: 4,
    });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await get(base, ROUTE);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('4');
        const body = (await res.json()) as any;
        expect(body).toMatchObject({ code: 50305, error: 'busy', requestId: res.headers.get('x-request-id') });
        expect(body.message).toMatch(/1000000 distance evaluations/);
      }
      const all = await get(base, `${ROUTE}?tolerance=0`);
      expect(all.status).toBe(200);
      const text = await all.text();
      expect(Number(all.headers.get('content-length'))).toBe(Buffer.byteLength(text));
      expect(all.headers.get('content-type')).toMatch(/^application\/json/);
      const every = JSON.parse(text);
      expect(every.route.properties.times).toEqual(trip.map((p) => p.t));
      expect(every.route.geometry.coordinates).toEqual(trip.map((p) => [p.lng, p.lat]));
      // a tolerance above the zig-zag's 50 m keeps the ends after one pass
      const flat = await get(base, `${ROUTE}?tolerance=60`);
      expect(flat.status).toBe(200);
      expect(((await flat.json()) as any).route.properties.times).toEqual([trip[0]!.t, trip[N - 1]!.t]);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
