// The safety score explained, ranked and over time, over HTTP on 127.0.0.1, checked against an
// independent computation (test/reference: trip factors, then the model, contributions and
// percentiles written from docs/decisions.md, "Statistics and scores"), from the serving pack and from SQL alike.
// Fixture: two apps; in the first, drivers with different habits, two identical drivers (a tie),
// one whose score clamps at 0, one scored on the last date only, one without trips; in the second,
// a single driver (N = 1) who shares an org_user_id with a driver of the first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { PassportStore } from '../../src/passport/store.js';
import { manifestOf, publishedRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { referenceFactors } from '../reference/factors.js';
import { referenceTrip, type RefTrip } from '../reference/trip.js';
import { refExplain, refInputs, refPercentiles, round, type RefExplained } from '../reference/safety-score.js';

type Api = Awaited<ReturnType<typeof createApi>>;
type Body = Record<string, any>;

let ws: Workspace;
let packApi: Api;
let sqlApi: Api;
const base: Record<'pack' | 'sql', string> = { pack: '', sql: '' };
let key: string;
let otherKey: string;
let otherAppId: string;
let clock = new Date('2026-11-21T09:00:00Z');

const ZONE = 'Europe/Berlin';
const OTHER_ZONE = 'UTC';
const DATES = ['2026-11-19', '2026-11-20', '2026-11-21'];
const LOADED_AT = new Date('2026-11-21T06:00:00Z');
const refTrips = new Map<string, RefTrip[]>(); // app id -> trips

/** One GET over HTTP from the pack server and the SQL server: the two must answer alike. */
async function get(path: string, apiKey = key): Promise<{ status: number; body: Body }> {
  const ask = async (url: string) => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = (await res.json()) as Body;
    delete body['requestId'];
    return { status: res.status, body };
  };
  const [fromPack, fromSql] = [await ask(base.pack), await ask(base.sql)];
  expect(fromPack, path).toEqual(fromSql);
  return fromPack;
}

interface Driver {
  org: string;
  /** the local hour the trips start at */
  hour: string;
  speed?: (i: number) => number;
  events?: (day: number) => { type: string; from: number; to: number }[];
  days?: number[];
  seconds?: number;
}

const everyDay = Array.from({ length: 20 }, (_, i) => i + 1);

const DRIVERS: Driver[] = [
  { org: 'calm', hour: '07', speed: (i) => (i % 50 < 10 ? 4 : 14) },
  {
    org: 'rush',
    hour: '17',
    speed: (i) => 10 + (i % 3),
    events: (d) =>
      d % 2 === 0
        ? [
            { type: 'phone_usage', from: 30, to: 150 },
            { type: 'brake', from: 200, to: 203 },
          ]
        : [],
  },
  // two drivers with the same trips: the same score, a tie in rank
  {
    org: 'twin-a',
    hour: '12',
    speed: (i) => (i % 20 < 5 ? 3 : 16),
    events: (d) => (d % 4 === 0 ? [{ type: 'speeding', from: 10, to: 40 }] : []),
  },
  {
    org: 'twin-b',
    hour: '12',
    speed: (i) => (i % 20 < 5 ? 3 : 16),
    events: (d) => (d % 4 === 0 ? [{ type: 'speeding', from: 10, to: 40 }] : []),
  },
  {
    org: 'harsh',
    hour: '08',
    speed: (i) => (i % 2 === 0 ? 9 : 13),
    events: () => [
      { type: 'brake', from: 100, to: 102 },
      { type: 'throttle', from: 300, to: 302 },
    ],
  },
  // on the phone the whole trip, always: the model's score clamps at 0
  { org: 'reckless', hour: '06', speed: () => 12, events: () => [{ type: 'phone_call', from: 0, to: 900 }] },
  // drives on the 20th only: scored on the 21st alone
  { org: 'newcomer', hour: '09', days: [20] },
];

function recordsOf(
  appId: string,
  ids: Map<string, number>,
  drivers: Driver[],
  offset: string,
): Record<string, unknown>[] {
  return drivers.flatMap((d) =>
    (d.days ?? everyDay).map((day) => {
      const date = `2026-11-${String(day).padStart(2, '0')}`;
      return tripRecord({
        appId,
        tripId: `${d.org}-${date}`,
        userId: ids.get(d.org) as number,
        orgUserId: d.org,
        start: `${date}T${d.hour}:30:00${offset}`,
        seconds: d.seconds ?? 900,
        speed: d.speed,
        events: d.events?.(day) ?? [],
      });
    }),
  );
}

beforeAll(async () => {
  ws = await workspace(ZONE);
  const store = new AppStore(ws.paths.appsFile);
  key = (await store.rotateKey(ws.appId)).apiKey;
  ({ appId: otherAppId, apiKey: otherKey } = await store.add({ name: 'other', timeZone: OTHER_ZONE }));
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, [...DRIVERS.map((d) => d.org), 'idle']);
  const otherIds = await passport.ensureAccounts(otherAppId, ['calm']);
  passport.close();
  const records = [
    ...recordsOf(ws.appId, ids, DRIVERS, '+01:00'),
    ...recordsOf(
      otherAppId,
      otherIds,
      [
        {
          org: 'calm',
          hour: '19',
          speed: (i) => 8 + (i % 5),
          events: (d) => (d % 5 === 0 ? [{ type: 'corner_left', from: 20, to: 25 }] : []),
        },
      ],
      'Z',
    ),
  ];
  for (const [appId, zone] of [
    [ws.appId, ZONE],
    [otherAppId, OTHER_ZONE],
  ] as const) {
    refTrips.set(
      appId,
      records
        .filter((r) => r['appId'] === appId)
        .map((r) => referenceTrip(r, zone, LOADED_AT.getTime()))
        .filter((t): t is RefTrip => !('rejected' in t)),
    );
  }
  await runLoad({
    dataDir: ws.dir,
    inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), records)],
    now: LOADED_AT,
  });
  await runScore({ dataDir: ws.dir, from: DATES[0], to: DATES[DATES.length - 1], now: clock });
  packApi = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  sqlApi = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50, serving: 'sql' });
  for (const [name, api] of [
    ['pack', packApi],
    ['sql', sqlApi],
  ] as const) {
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    base[name] = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  }
});
afterAll(async () => {
  await packApi?.close();
  await sqlApi?.close();
  ws?.cleanup();
});

interface RefScore extends RefExplained {
  tripCount: number;
  windowStart: string;
  windowEnd: string;
  percentile: number;
}

/** The reference scores of one app, date and interval by org_user_id (drivers with a trip in the window). */
function referenceScores(appId: string, zone: string, date: string, interval: 30 | 90): Map<string, RefScore> {
  const trips = refTrips.get(appId) as RefTrip[];
  const scored: [string, RefScore][] = [];
  for (const org of new Set(trips.map((t) => t.orgUserId))) {
    const f = referenceFactors(
      trips.filter((t) => t.orgUserId === org),
      zone,
      date,
      interval,
    );
    if (f.tripCount < 1) continue;
    scored.push([
      org,
      {
        ...refExplain(refInputs(f)),
        tripCount: f.tripCount,
        windowStart: f.windowStart,
        windowEnd: f.windowEnd,
        percentile: NaN,
      },
    ]);
  }
  // ranked by the score as shown (2 places)
  const percentiles = refPercentiles(scored.map(([, s]) => round(s.score, 2)));
  scored.forEach(([, s], i) => (s.percentile = percentiles[i] as number));
  return new Map(scored);
}

/** Asserts an API score object against the reference, to the places the API rounds to. */
function expectMatches(actual: Body, want: RefScore, label: string): void {
  expect(actual['safetyScore'], label).toBeCloseTo(round(want.score, 2), 9);
  expect(actual['tripCount'], label).toBe(want.tripCount);
  expect([actual['startTime'], actual['endTime']], label).toEqual([want.windowStart, want.windowEnd]);
  expect(actual['percentile'], label).toBe(want.percentile);
  expect(actual['modelVersion'], label).toBe('safety-score/1');
  const factors = actual['factors'] as Body[];
  expect(
    factors.map((f) => f['factor']),
    label,
  ).toEqual(want.factors.map((f) => f.factor));
  for (const [i, f] of want.factors.entries()) {
    const got = factors[i] as Body;
    const places = f.factor === 'eventsPer100km' ? 2 : 4;
    expect(got['value'], `${label} ${f.factor} value`).toBeCloseTo(round(f.value, places), 9);
    if (f.factor !== 'eventsPer100km') expect(actual[f.factor], `${label} ${f.factor}`).toBe(got['value']);
    expect(got['multiplier'], `${label} ${f.factor} multiplier`).toBeCloseTo(round(f.multiplier, 4), 9);
    expect(got['contribution'], `${label} ${f.factor} contribution`).toBeCloseTo(f.contribution, 9);
  }
}

describe('safety score explained and ranked', () => {
  it("gives each factor's value, multiplier and contribution and the percentile, as the reference computes them", async () => {
    let checked = 0;
    for (const date of DATES) {
      clock = new Date(`${date}T12:00:00Z`);
      for (const interval of [30, 90] as const) {
        const want = referenceScores(ws.appId, ZONE, date, interval);
        for (const d of [...DRIVERS.map((x) => x.org), 'idle']) {
          const { status, body } = await get(`/v1/org-user/${d}/safety-score?interval=${interval}`);
          const ref = want.get(d);
          if (!ref) {
            expect([status, body['error']], `${d} ${date}`).toEqual([404, 'score_not_available']);
            continue;
          }
          expect(status).toBe(200);
          expect(body['score']['evaluationDate']).toBe(date);
          expectMatches(body['score'], ref, `${d} ${date} ${interval}`);
          checked++;
        }
      }
    }
    clock = new Date('2026-11-21T09:00:00Z');
    expect(checked).toBe(2 * (6 + 6 + 7));
  });

  it('shares the lowest rank between tied drivers, clamps at 0, and never charges a negative contribution', async () => {
    const twins = await Promise.all(
      ['twin-a', 'twin-b'].map(async (d) => (await get(`/v1/org-user/${d}/safety-score?interval=30`)).body['score']),
    );
    expect(twins[0].safetyScore).toBe(twins[1].safetyScore);
    expect(twins[0].percentile).toBe(twins[1].percentile);
    const reckless = (await get('/v1/org-user/reckless/safety-score?interval=30')).body['score'];
    expect(reckless.safetyScore).toBe(0);
    expect(reckless.percentile).toBe(0);
    // only taking the phone away lifts the score above 0: any other input at 0 leaves it clamped
    const costs = Object.fromEntries((reckless.factors as Body[]).map((f) => [f['factor'], f['contribution']]));
    const values = Object.fromEntries((reckless.factors as Body[]).map((f) => [f['factor'], f['value']]));
    expect(costs['distractedDriving']).toBeGreaterThan(90);
    expect([values['weekdayDriving'], values['eventsPer100km']].every((v) => v > 0)).toBe(true);
    expect([costs['weekdayDriving'], costs['eventsPer100km']]).toEqual([0, 0]);
    for (const org of ['calm', 'rush', 'harsh', 'twin-a', 'reckless', 'newcomer']) {
      for (const f of (await get(`/v1/org-user/${org}/safety-score?interval=90`)).body['score'].factors as Body[])
        expect(f['contribution']).toBeGreaterThanOrEqual(0);
    }
  });

  it('leaves the explanation out with explain=false, and nothing else', async () => {
    const full = (await get('/v1/org-user/rush/safety-score?interval=30')).body;
    const lean = (await get('/v1/org-user/rush/safety-score?interval=30&explain=false')).body;
    expect(full.score.factors).toHaveLength(6);
    expect(lean.score).not.toHaveProperty('factors');
    const { factors: _, ...rest } = full.score;
    expect(lean).toEqual({ ...full, score: rest });
    expect((await get('/v1/org-user/rush/safety-score?interval=30&explain=maybe')).body.message).toMatch(/^explain:/);
  });

  it("ranks within one app: the other app's single driver is at 100 and sees only their own scores", async () => {
    clock = new Date('2026-11-21T12:00:00Z');
    const mine = (await get('/v1/org-user/calm/safety-score?interval=30')).body;
    const theirs = (await get('/v1/org-user/calm/safety-score?interval=30', otherKey)).body;
    expect(theirs.appId).toBe(otherAppId);
    expect(mine.userId).not.toBe(theirs.userId);
    expectMatches(
      theirs.score,
      referenceScores(otherAppId, OTHER_ZONE, '2026-11-21', 30).get('calm') as RefScore,
      'other calm',
    );
    expect(theirs.score.percentile).toBe(100);
    expect(mine.score.safetyScore).not.toBe(theirs.score.safetyScore);
    expect((await get('/v1/org-user/rush/safety-score?interval=30', otherKey)).body.error).toBe('user_not_found');
    expect((await get('/v1/org-user/rush/safety-score/history?interval=30', otherKey)).body.error).toBe(
      'user_not_found',
    );
  });
});

describe('safety score history', () => {
  it("lists one entry per scored evaluation date, oldest first, each equal to the safety score's answer that day", async () => {
    for (const interval of [30, 90] as const) {
      for (const d of ['calm', 'twin-b', 'reckless', 'newcomer']) {
        const history = (
          await get(
            `/v1/org-user/${d}/safety-score/history?interval=${interval}&startTime=2026-11-01&endTime=2026-11-30`,
          )
        ).body;
        expect(history).toMatchObject({ appId: ws.appId, orgUserId: d, interval });
        const scoredOn = DATES.filter((date) => referenceScores(ws.appId, ZONE, date, interval).has(d));
        expect(history.history.map((h: Body) => h['evaluationDate'])).toEqual(scoredOn);
        for (const [i, date] of scoredOn.entries()) {
          clock = new Date(`${date}T12:00:00Z`);
          expect(history.history[i], `${d} ${date}`).toEqual(
            (await get(`/v1/org-user/${d}/safety-score?interval=${interval}`)).body.score,
          );
          expectMatches(
            history.history[i],
            referenceScores(ws.appId, ZONE, date, interval).get(d) as RefScore,
            `${d} ${date}`,
          );
        }
        clock = new Date('2026-11-21T09:00:00Z');
      }
    }
    expect(
      (await get('/v1/org-user/newcomer/safety-score/history?interval=30&startTime=2026-11-01&endTime=2026-11-30')).body
        .history,
    ).toHaveLength(1);
  });

  it('bounds evaluation dates inclusively, never shows one after today, and defaults to the last 366 days', async () => {
    const dates = async (query: string) =>
      ((await get(`/v1/org-user/calm/safety-score/history?interval=30${query}`)).body.history as Body[]).map(
        (h) => h['evaluationDate'],
      );
    expect(await dates('&startTime=2026-11-20&endTime=2026-11-20')).toEqual(['2026-11-20']);
    expect(await dates('&startTime=2026-11-20&endTime=2026-11-21')).toEqual(['2026-11-20', '2026-11-21']);
    expect(await dates('&startTime=2026-11-22&endTime=2026-12-01')).toEqual([]);
    expect(await dates('')).toEqual(DATES);
    expect(await dates('&endTime=2026-11-19')).toEqual(['2026-11-19']);
    // on the 20th (Berlin), the 21st's score is ahead: not shown, as the safety score would not show it
    clock = new Date('2026-11-20T12:00:00Z');
    expect(await dates('&startTime=2026-11-01&endTime=2026-11-30')).toEqual(['2026-11-19', '2026-11-20']);
    clock = new Date('2026-11-21T09:00:00Z');
    const lean = (await get('/v1/org-user/calm/safety-score/history?interval=90&explain=false')).body.history as Body[];
    expect(lean).toHaveLength(3);
    for (const h of lean) expect(h).not.toHaveProperty('factors');
    expect((await get('/v1/org-user/idle/safety-score/history?interval=30')).body).toMatchObject({
      orgUserId: 'idle',
      history: [],
    });
    expect((await get('/v1/org-user/nobody/safety-score/history?interval=30')).body.error).toBe('user_not_found');
  });

  it('answers 400 naming the parameter: at most 366 days, real dates in order, interval 30 or 90', async () => {
    const status = async (query: string) => {
      const { status: s, body } = await get(`/v1/org-user/calm/safety-score/history?${query}`);
      return [s, s === 200 ? '' : String(body['message']).split(':')[0], body['error'] ?? ''];
    };
    expect(await status('interval=30&startTime=2025-11-21&endTime=2026-11-21')).toEqual([200, '', '']);
    expect(await status('interval=30&startTime=2025-11-20&endTime=2026-11-21')).toEqual([
      400,
      'endTime',
      'invalid_parameter',
    ]);
    expect(await status('interval=30&startTime=2025-01-01')).toEqual([400, 'startTime', 'invalid_parameter']);
    expect(await status('interval=30&startTime=2026-11-21&endTime=2026-11-20')).toEqual([
      400,
      'endTime',
      'invalid_parameter',
    ]);
    expect(await status('interval=30&startTime=2026-02-30&endTime=2026-03-01')).toEqual([
      400,
      'startTime',
      'invalid_parameter',
    ]);
    expect(await status('interval=30&startTime=2026-11-01&endTime=2026-11-21T00:00:00Z')).toEqual([
      400,
      'endTime',
      'invalid_parameter',
    ]);
    expect(await status('interval=7')).toEqual([400, 'interval', 'invalid_parameter']);
    expect(await status('startTime=2026-11-01')).toEqual([400, 'interval', 'invalid_parameter']);
    expect(await status('interval=30&limit=3')).toEqual([400, 'limit', 'invalid_parameter']);
  });
});

describe('score layers of the serving pack', () => {
  const dates = async (org: string, interval = 30) =>
    (
      (
        await get(
          `/v1/org-user/${org}/safety-score/history?interval=${interval}&startTime=2026-11-01&endTime=2026-11-30`,
        )
      ).body.history as Body[]
    ).map((h) => h['evaluationDate']);
  const waitFor = async (version: number) => {
    for (const api of [packApi, sqlApi]) {
      for (let i = 0; i < 200 && api.ctx.snapshots.manifest?.version !== version; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(api.ctx.snapshots.manifest?.version).toBe(version);
    }
  };

  it("adds a night's scores as a delta layer, and answers across the layers like SQL", async () => {
    clock = new Date('2026-11-22T09:00:00Z');
    const night = await runScore({ dataDir: ws.dir, date: '2026-11-22', now: clock });
    const written = night.publish.pack?.filter((p) => p.section === 'scores') ?? [];
    const served = await publishedRows(ws.paths, 'safety_scores', 'user_id', []);
    const tonight = served.filter((r) => r['evaluation_date'] === '2026-11-22').length;
    // that night's scores only, above the earlier layer(s)
    expect(written.map((w) => [w.rows, w.copied])).toEqual([[tonight, 0]]);
    expect(manifestOf(ws.paths)?.pack?.files.scores.length).toBeGreaterThanOrEqual(2);
    await waitFor(night.publish.version);
    expect(await dates('calm')).toEqual([...DATES, '2026-11-22']);
    for (const org of DRIVERS.map((d) => d.org))
      for (const interval of [30, 90]) await get(`/v1/org-user/${org}/safety-score?interval=${interval}`);
  });

  it('writes the section whole when a date is scored again, so a driver no longer scored loses that date', async () => {
    // the newcomer's only trip, sent again too short to count: no window holds a normal trip of theirs now
    const passport = packApi.ctx.passport;
    const id = (await passport.activeAccount(ws.appId, 'newcomer')) as number;
    const resent = tripRecord({
      appId: ws.appId,
      tripId: 'newcomer-2026-11-20',
      userId: id,
      orgUserId: 'newcomer',
      start: '2026-11-20T09:30:00+01:00',
      seconds: 30,
    });
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'resent.ndjson'), [resent])],
      now: clock,
    });
    const again = await runScore({ dataDir: ws.dir, date: '2026-11-22', now: clock });
    const written = again.publish.pack?.filter((p) => p.section === 'scores') ?? [];
    const served = await publishedRows(ws.paths, 'safety_scores', 'user_id', []);
    expect(written.map((w) => w.rows)).toEqual([served.length]);
    expect(manifestOf(ws.paths)?.pack?.files.scores).toHaveLength(1);
    await waitFor(again.publish.version);
    // the 21st was not scored again: its score stays, as in the warehouse
    expect(await dates('newcomer')).toEqual(['2026-11-21']);
    expect((await get('/v1/org-user/newcomer/safety-score?interval=30')).body.score.evaluationDate).toBe('2026-11-21');
    expect(await dates('calm')).toEqual([...DATES, '2026-11-22']);
    clock = new Date('2026-11-21T09:00:00Z');
  });
});

describe('OpenAPI', () => {
  it('documents both score routes: operation, tag, parameters and an example that fits the schema', async () => {
    const doc = (await (await fetch(`${base.pack}/v1/openapi.json`)).json()) as Body;
    for (const [path, id, params] of [
      ['/v1/org-user/{org_user_id}/safety-score', 'getSafetyScore', ['org_user_id', 'interval', 'explain']],
      [
        '/v1/org-user/{org_user_id}/safety-score/history',
        'getSafetyScoreHistory',
        ['org_user_id', 'interval', 'startTime', 'endTime', 'explain'],
      ],
    ] as const) {
      const op = doc['paths'][path]['get'];
      expect(op).toMatchObject({ operationId: id, tags: ['Safety score'] });
      expect(op.summary.length).toBeGreaterThan(10);
      expect(op.description.length).toBeGreaterThan(10);
      expect(op.parameters.map((p: Body) => p['name'])).toEqual(params);
      for (const p of op.parameters) expect(p['description'], `${id} ${p['name']}`).toEqual(expect.any(String));
      const example = op.responses['200'].content['application/json'].schema.examples[0];
      const score = id === 'getSafetyScore' ? example.score : example.history[0];
      // the example is the model's own arithmetic: contributions recomputed from its values
      const inputs = Object.fromEntries((score.factors as Body[]).map((f) => [f['factor'], f['value']])) as Record<
        string,
        number
      >;
      const explained = refExplain(inputs as never);
      expect(score.safetyScore).toBe(round(explained.score, 2));
      expect(score.factors.map((f: Body) => f['contribution'])).toEqual(explained.factors.map((f) => f.contribution));
      expect(score.factors.map((f: Body) => f['multiplier'])).toEqual(
        explained.factors.map((f) => round(f.multiplier, 4)),
      );
    }
  });
});
