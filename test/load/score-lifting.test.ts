// Plausibility rules 4-6 (docs/decisions.md, "Trip records"): a driver cannot lift their own safety score by copying
// their trips under new tripIds (overlapping_trip), by re-sending them without their events
// (trip_immutable), or by reporting speeds that do not describe their positions
// (speed_inconsistent). Each attack through the real upload route, the real load and the real
// score job; the score after equals the score before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { openDatabase } from '../../src/db/open.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const clock = new Date('2026-11-21T09:00:00Z');
const EVALUATION_DATE = '2026-11-21';
let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;
let token: string;
let platformUserId: number;
let honest: Record<string, unknown>[];

/** An SDK upload; a 503 (load shedding on a busy machine) is retried as the SDK would. */
const upload = async (payload: unknown) => {
  for (let attempt = 1; ; attempt++) {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: `Bearer ${token}` },
      payload: payload as object,
    });
    if (res.statusCode !== 503 || attempt === 10) return res;
    await new Promise((r) => setTimeout(r, 1000));
  }
};

/** The trip as the SDK sends it: without the identity fields the token supplies. */
const sdkRecord = (record: Record<string, unknown>) => {
  const { appId: _a, platformUserId: _p, orgUserId: _o, ...rest } = record;
  return rest;
};

/** The score of the last scoreNow, until a load, a re-derivation or a write to the warehouse changes what it scores. */
let lastScore: { safetyScore: number; tripCount: number } | undefined;
const scoreNow = async () => {
  await runScore({ dataDir: ws.dir, date: EVALUATION_DATE, now: clock });
  const [row] = await warehouseRows(
    ws.paths,
    `select safety_score, count_trips from safety_scores where user_id = ${platformUserId} and evaluation_date = '${EVALUATION_DATE}' and interval_days = 30`,
  );
  lastScore = { safetyScore: Number(row!['safety_score']), tripCount: Number(row!['count_trips']) };
  return lastScore;
};
/**
 * The score before an attack: the previous test's score after, when nothing changed the warehouse
 * since (a score run costs about a second of CPU); scored afresh when the test runs alone.
 */
const scoreBefore = async () => lastScore ?? scoreNow();
const load = (options: Parameters<typeof runLoad>[0]) => {
  lastScore = undefined;
  return runLoad(options);
};

const tripsRows = (where: string) =>
  warehouseRows(
    ws.paths,
    `select trip_id, status, abnormal_reason, version::int as version, count_events from trips where ${where} order by trip_id`,
  );

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  const issued = (
    await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/lifter/token',
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  token = issued.token;
  platformUserId = issued.platformUserId;
  // an honest history: ten commutes, some with hard brakes and phone use (a score below 100)
  honest = Array.from({ length: 10 }, (_, i) =>
    tripRecord({
      appId: ws.appId,
      userId: platformUserId,
      orgUserId: 'lifter',
      tripId: `honest-${i}`,
      start: `2026-11-${String(10 + i).padStart(2, '0')}T07:30:00+01:00`,
      seconds: 900,
      events:
        i % 3 === 0
          ? [
              { type: 'brake', from: 100, to: 102 },
              { type: 'phone_usage', from: 200, to: 500 },
            ]
          : [],
    }),
  );
  expect((await upload(honest.map(sdkRecord))).statusCode).toBe(202);
  await runLoad({ dataDir: ws.dir, now: clock });
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('(a) copies of an own trip under new tripIds, same times, no events', () => {
  it('are overlapping_trip and leave the 30-day score as it was', async () => {
    const before = await scoreNow();
    expect(before.tripCount).toBe(10);
    expect(before.safetyScore).toBeLessThan(100);
    const copies = Array.from({ length: 15 }, (_, i) => ({
      ...sdkRecord(honest[0]!),
      tripId: `copy-${i}`,
      events: [],
    }));
    expect((await upload(copies)).json()).toMatchObject({ accepted: 15, rejected: [] });
    const loaded = await load({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.tripsAbnormal).toEqual({ overlapping_trip: 15 });
    const after = await scoreNow();
    expect(after.tripCount).toBe(10);
    expect(Math.abs(after.safetyScore - before.safetyScore)).toBeLessThanOrEqual(0.01);
    // the copies are kept and listed as abnormal, as every abnormal trip is; the original stays normal
    const copies_ = await tripsRows("trip_id like 'copy-%' or trip_id = 'honest-0'");
    expect(copies_).toHaveLength(16);
    expect(copies_.filter((t) => t['status'] === 'normal').map((t) => t['trip_id'])).toEqual(['honest-0']);
  });
});

describe('a warehouse from before the rules', () => {
  it('load.js --rederive judges stored history by them: the copies become overlapping_trip again, the score goes back', async () => {
    const before = await scoreBefore();
    lastScore = undefined;
    // as a warehouse written before rule 5 holds them: the copies normal, no digests
    const db = await openDatabase(ws.paths.warehouseFile);
    try {
      await db.connection.run(
        "update trips set abnormal_reason = '', status = 'normal', is_normal = true, content_hash = null, version = version + 1000 where trip_id like 'copy-%'",
      );
    } finally {
      db.close();
    }
    const result = await runRederive({ dataDir: ws.dir, now: clock });
    expect(result.totals.failed).toBe(0);
    expect((await tripsRows("trip_id like 'copy-%'")).map((t) => t['abnormal_reason'])).toEqual(
      Array(15).fill('overlapping_trip'),
    );
    const [missing] = await warehouseRows(ws.paths, 'select count(*)::int as n from trips where content_hash is null');
    expect(missing!['n']).toBe(0);
    const after = await scoreNow();
    expect(Math.abs(after.safetyScore - before.safetyScore)).toBeLessThanOrEqual(0.01);
  });
});

describe('(b) the own trips re-sent through the SDK with events: []', () => {
  it('are trip_immutable where they change a trip, leave the stored trips and the score as they were', async () => {
    const before = await scoreBefore();
    const stored = await tripsRows("trip_id like 'honest-%'");
    const resent = honest.map((r) => ({ ...sdkRecord(r), events: [] }));
    expect((await upload(resent)).json()).toMatchObject({ accepted: 10, rejected: [] });
    const loaded = await load({ dataDir: ws.dir, now: clock });
    // trips 0, 3, 6 and 9 had events: those re-sends are refused; the others equal the stored trips
    expect(loaded.totals.rejected).toEqual({ trip_immutable: 4 });
    expect(loaded.files.reduce((n, f) => n + (f.records['unchanged'] ?? 0), 0)).toBe(6);
    expect(loaded.totals.tripsLoaded).toBe(0);
    expect(loaded.events.tripUpdated).toBe(0);
    expect(await tripsRows("trip_id like 'honest-%'")).toEqual(stored);
    const quarantined = await warehouseRows(
      ws.paths,
      "select trip_id, raw from quarantine where reason = 'trip_immutable' order by trip_id",
    );
    expect(quarantined.map((q) => q['trip_id'])).toEqual(['honest-0', 'honest-3', 'honest-6', 'honest-9']);
    // the line as delivered is kept, as for every rejected record
    expect(JSON.parse(String(quarantined[0]!['raw']))).toMatchObject({ tripId: 'honest-0', events: [] });
    const after = await scoreNow();
    expect(Math.abs(after.safetyScore - before.safetyScore)).toBeLessThanOrEqual(0.01);
    expect(after.tripCount).toBe(before.tripCount);
  });

  it('an identical re-send, written differently (epoch ms for ISO, keys reordered), changes nothing', async () => {
    const stored = await tripsRows("trip_id like 'honest-%'");
    const [warehouseVersion] = await warehouseRows(ws.paths, "select value from meta where key = 'version'");
    const rewritten = honest.map((r) => {
      const { points, events, startTime, endTime, ...rest } = sdkRecord(r) as Record<string, unknown>;
      return {
        events,
        endTime: Date.parse(String(endTime)),
        ...rest,
        startTime: Date.parse(String(startTime)),
        points: (points as { t: number; lat: number; lng: number; speed: number }[]).map((p) => ({
          speed: p.speed,
          lng: p.lng,
          lat: p.lat,
          t: new Date(p.t).toISOString(),
        })),
      };
    });
    expect((await upload(rewritten)).json()).toMatchObject({ accepted: 10, rejected: [] });
    const loaded = await load({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.rejected).toEqual({});
    expect(loaded.files.reduce((n, f) => n + (f.records['unchanged'] ?? 0), 0)).toBe(10);
    expect(loaded.totals.tripsLoaded).toBe(0);
    expect(loaded.events.tripCreated + loaded.events.tripUpdated).toBe(0);
    expect(await tripsRows("trip_id like 'honest-%'")).toEqual(stored);
    // the batch file is loaded (a new warehouse version), but no trip row took it
    const [after] = await warehouseRows(ws.paths, "select value from meta where key = 'version'");
    expect(Number(after!['value'])).toBeGreaterThan(Number(warehouseVersion!['value']));
  });

  it('two uploads of one new trip in one batch: the first is kept, a changed second one is trip_immutable', async () => {
    const first = sdkRecord(
      tripRecord({
        appId: ws.appId,
        tripId: 'twice',
        start: '2026-11-20T12:00:00+01:00',
        seconds: 600,
        events: [{ type: 'brake', from: 10, to: 12 }],
      }),
    );
    expect((await upload(first)).statusCode).toBe(202);
    expect((await upload({ ...first, events: [] })).statusCode).toBe(202);
    // the same values with the keys in another order (a byte-identical upload is left out when batched)
    expect((await upload({ events: first['events'], ...first })).statusCode).toBe(202);
    const loaded = await load({ dataDir: ws.dir, now: clock });
    expect(loaded.uploadBatches?.files).toHaveLength(1);
    expect(loaded.totals.rejected).toEqual({ trip_immutable: 1 });
    expect(loaded.files.reduce((n, f) => n + (f.records['unchanged'] ?? 0), 0)).toBe(1);
    expect(await tripsRows("trip_id = 'twice'")).toMatchObject([{ status: 'normal', count_events: 1 }]);
  });

  it('a partner landing file may still replace the trip', async () => {
    const replaced = {
      ...honest[1]!,
      events: [
        {
          type: 'brake',
          startTime: honest[1]!['startTime'],
          endTime: honest[1]!['startTime'],
          startPoint: { lat: 52.5, lng: 13.4 },
          endPoint: { lat: 52.5, lng: 13.4 },
        },
      ],
    };
    const loaded = await load({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'partner.ndjson'), [replaced])],
      now: clock,
    });
    expect(loaded.totals.rejected).toEqual({});
    expect(loaded.totals.tripsReplaced).toBe(1);
    expect(await tripsRows("trip_id = 'honest-1'")).toMatchObject([{ status: 'normal', count_events: 1 }]);
  });
});

describe('(c) positions at 249 km/h while every reported speed says 54 km/h', () => {
  it('is speed_inconsistent and not scored', async () => {
    const before = await scoreNow();
    const startMs = Date.parse('2026-11-20T15:00:00Z');
    const metresPerSecond = 249 / 3.6;
    // a straight line north: each second 69.17 m of latitude (below 250 km/h, so no spike and no speed_implausible)
    const points = Array.from({ length: 301 }, (_, i) => ({
      t: startMs + i * 1000,
      lat: 52 + (i * metresPerSecond) / 111_195.08,
      lng: 13.4,
      speed: 15,
    }));
    const attack = {
      tripId: 'too-fast',
      os: 'ios',
      startTime: new Date(startMs).toISOString(),
      endTime: new Date(startMs + 300_000).toISOString(),
      points,
    };
    expect((await upload(attack)).json()).toMatchObject({ accepted: 1, rejected: [] });
    const loaded = await load({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.pointsDropped).toEqual({});
    expect(loaded.totals.tripsAbnormal).toEqual({ speed_inconsistent: 1 });
    const [trip] = await warehouseRows(
      ws.paths,
      "select status, abnormal_reason, max_speed_kmh from trips where trip_id = 'too-fast'",
    );
    expect(trip).toMatchObject({ status: 'abnormal', abnormal_reason: 'speed_inconsistent' });
    expect(Number(trip!['max_speed_kmh'])).toBeCloseTo(54, 9);
    const after = await scoreNow();
    expect(after.tripCount).toBe(before.tripCount);
    expect(Math.abs(after.safetyScore - before.safetyScore)).toBeLessThanOrEqual(0.01);
  });
});
