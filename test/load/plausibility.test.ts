// Plausibility (docs/decisions.md, "Trip records"): a driver must not be able to raise their safety score with trips
// that jump between far places, and record times must lie between 2000 and the validating moment
// (+10 min). Real warehouse, real landing files, the API in process with an injected clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runQuarantine } from '../../src/jobs/quarantine.js';
import { formatQuarantine } from '../../src/jobs/quarantine-format.js';
import { haversineMeters } from '../reference/trip.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const clock = new Date('2026-11-21T09:00:00Z');
const EVALUATION_DATE = '2026-11-21';
let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;
let token: string;
let platformUserId: number;

const upload = (payload: unknown) =>
  api.app.inject({
    method: 'POST',
    url: '/v1/sdk/trips',
    headers: { authorization: `Bearer ${token}` },
    payload: payload as object,
  });

const scoresOf = (userId: number) =>
  warehouseRows(
    ws.paths,
    `select interval_days, safety_score, count_trips, mileage_m from safety_scores where user_id = ${userId} and evaluation_date = '${EVALUATION_DATE}' order by interval_days`,
  );

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  const issued = (
    await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/gamer/token',
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  token = issued.token;
  platformUserId = issued.platformUserId;
  // an honest history: ten commutes with a few hard brakes
  const honest = Array.from({ length: 10 }, (_, i) =>
    tripRecord({
      appId: 'ignored',
      tripId: `honest-${i}`,
      start: `2026-11-${String(10 + i).padStart(2, '0')}T07:30:00+01:00`,
      seconds: 900,
      events: i % 3 === 0 ? [{ type: 'brake', from: 100, to: 102 }] : [],
    }),
  );
  expect((await upload(honest)).statusCode).toBe(202);
  await runLoad({ dataDir: ws.dir, now: clock });
  await runScore({ dataDir: ws.dir, date: EVALUATION_DATE, now: clock });
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('a trip jumping between far places', () => {
  it('uploaded through the SDK, is abnormal (speed_implausible) and leaves the safety score as it was', async () => {
    const before = await scoresOf(platformUserId);
    expect(before).toHaveLength(2);
    const startMs = Date.parse('2026-11-20T10:00:00Z');
    const points = Array.from({ length: 600 }, (_, i) => ({
      t: startMs + i * 1000,
      lat: i % 2 === 0 ? 80 : -80,
      lng: i % 2 === 0 ? 179 : -179,
      speed: 15,
    }));
    const attack = {
      tripId: 'teleport',
      os: 'android',
      startTime: new Date(startMs).toISOString(),
      endTime: new Date(startMs + 599_000).toISOString(),
      points,
    };
    const res = await upload(attack);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: [] });

    const loaded = await runLoad({ dataDir: ws.dir, now: clock });
    // every inner point is a spike (both its segments are ~17,800 km in 1 s); the first and last stay
    expect(loaded.totals.pointsDropped).toEqual({ position_spike: 598 });
    expect(loaded.totals.tripsAbnormal).toEqual({ speed_implausible: 1 });
    const [trip] = await warehouseRows(
      ws.paths,
      "select status, abnormal_reason, count_points, mileage_m, start_lat, start_lng, end_lat, end_lng from trips where trip_id = 'teleport'",
    );
    expect(trip).toMatchObject({
      status: 'abnormal',
      abnormal_reason: 'speed_implausible',
      count_points: 2,
      start_lat: 80,
      start_lng: 179,
      end_lat: -80,
      end_lng: -179,
    });
    // the one segment left, (80, 179) -> (-80, -179) in 599 s, instead of 599 of them (10,657,141,462 m)
    expect(Number(trip?.['mileage_m'])).toBe(Math.round(haversineMeters(80, 179, -80, -179)));

    await runScore({ dataDir: ws.dir, date: EVALUATION_DATE, now: clock });
    expect(await scoresOf(platformUserId)).toEqual(before);
  });

  it('with one GPS spike in an honest trip, drops the spike and keeps the trip normal with the honest mileage', async () => {
    const honest = tripRecord({
      appId: ws.appId,
      tripId: 'one-spike',
      userId: platformUserId,
      orgUserId: 'gamer',
      start: '2026-11-20T17:00:00+01:00',
      seconds: 300,
    });
    const points = honest['points'] as { t: number; lat: number; lng: number; speed: number }[];
    let expectedMetres = 0;
    for (let i = 1; i < points.length; i++)
      expectedMetres += haversineMeters(points[i - 1]!.lat, points[i - 1]!.lng, points[i]!.lat, points[i]!.lng);
    // the point at 120 s is reported 30 km east, but the SDK says it was driving at 12 m/s
    const withSpike = points.map((p, i) => (i === 120 ? { ...p, lng: p.lng + 0.44 } : p));
    const loaded = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'spike.ndjson'), [{ ...honest, points: withSpike }])],
      now: clock,
    });
    expect(loaded.totals.pointsDropped).toEqual({ position_spike: 1 });
    const [trip] = await warehouseRows(
      ws.paths,
      "select status, abnormal_reason, count_points, mileage_m::int as mileage_m from trips where trip_id = 'one-spike'",
    );
    // the honest neighbours of the spike are 2 s apart: their segment replaces the two honest ones
    const withoutSpike = points.filter((_, i) => i !== 120);
    let keptMetres = 0;
    for (let i = 1; i < withoutSpike.length; i++)
      keptMetres += haversineMeters(
        withoutSpike[i - 1]!.lat,
        withoutSpike[i - 1]!.lng,
        withoutSpike[i]!.lat,
        withoutSpike[i]!.lng,
      );
    expect(Math.abs(keptMetres - expectedMetres)).toBeLessThan(1e-6);
    expect(trip).toMatchObject({
      status: 'normal',
      abnormal_reason: '',
      count_points: points.length - 1,
      mileage_m: Math.round(keptMetres),
    });
  });
});

describe('record times out of range (time_out_of_range)', () => {
  const record = (tripId: string, startTime: unknown, endTime: unknown) => ({
    tripId,
    os: 'ios',
    startTime,
    endTime,
    points: [],
  });
  const edge = new Date(clock.getTime() + 10 * 60_000);
  const cases = () => [
    record('far-future', '9999-12-31T00:00:00Z', '9999-12-31T00:30:00Z'),
    record('far-past', '1999-12-31T23:00:00Z', '1999-12-31T23:30:00Z'),
    record('epoch-zero', 0, 600_000),
    record(
      'ends-too-late',
      new Date(clock.getTime() - 60_000).toISOString(),
      new Date(edge.getTime() + 1000).toISOString(),
    ),
    record('ends-at-edge', new Date(clock.getTime() - 60_000).toISOString(), edge.toISOString()),
    record('starts-at-edge', edge.getTime(), edge.getTime()),
  ];

  // the range and the server's time (the clock of the upload, or of the load), then the time outside it
  const range =
    'startTime and endTime must lie between 2000-01-01T00:00:00.000Z and 2026-11-21T09:10:00.000Z ' +
    "(10 minutes after the server's time, 2026-11-21T09:00:00.000Z); ";
  const details = [
    `${range}startTime is 9999-12-31T00:00:00.000Z`,
    `${range}startTime is 1999-12-31T23:00:00.000Z`,
    `${range}startTime is 1970-01-01T00:00:00.000Z`,
    `${range}endTime is 2026-11-21T09:10:01.000Z`,
  ];

  it('rejects them at upload, per record, against the upload time, naming the range and the time; exactly now + 10 min is accepted', async () => {
    const res = await upload(cases());
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      code: 0,
      message: 'accepted',
      accepted: 2,
      rejected: ['far-future', 'far-past', 'epoch-zero', 'ends-too-late'].map((tripId, index) => ({
        index,
        tripId,
        reason: 'time_out_of_range',
        detail: details[index],
      })),
    });
    const loaded = await runLoad({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.tripsLoaded).toBe(2);
    expect(loaded.totals.rejected).toEqual({});
  });

  it('rejects them at load against the load time and quarantines them with their line, naming the range and the time', async () => {
    const identity = { appId: ws.appId, platformUserId, orgUserId: 'gamer' };
    const lines = cases().map((r) => ({ ...r, ...identity, tripId: `file-${r.tripId}` }));
    const file = writeNdjson(join(ws.dir, 'in', 'times.ndjson'), lines);
    const loaded = await runLoad({ dataDir: ws.dir, inputs: [file], now: clock });
    expect(loaded.totals.rejected).toEqual({ time_out_of_range: 4 });
    expect(loaded.totals.tripsLoaded).toBe(2);
    const quarantined = await warehouseRows(
      ws.paths,
      `select line_no::int as line_no, reason, trip_id, detail from quarantine where source_file = '${file}' order by line_no`,
    );
    expect(quarantined).toEqual(
      [1, 2, 3, 4].map((line) => ({
        line_no: line,
        reason: 'time_out_of_range',
        trip_id: lines[line - 1]!.tripId,
        detail: details[line - 1],
      })),
    );
    // quarantine.js show says it under the reason
    const [{ batch_id: batch }] = (await warehouseRows(
      ws.paths,
      `select batch_id::int as batch_id from quarantine where source_file = '${file}' limit 1`,
    )) as [{ batch_id: number }];
    const shown = formatQuarantine(await runQuarantine(ws.dir, { op: 'show', id: `${batch}-4` }));
    expect(shown).toContain(`: record rejected: time_out_of_range\n  detail:  ${details[3]}\n`);
    // validated an hour later, the record that ended 1 s too late is in range (the moment is the load's clock)
    const later = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'times-2.ndjson'), lines.slice(3))],
      now: new Date(clock.getTime() + 3_600_000),
    });
    expect(later.totals.rejected).toEqual({});
    expect(later.totals.tripsLoaded).toBe(3);
  });
});

describe('generate.js', () => {
  it('refuses an --end-date after today (exit 2, one line naming the flag)', async () => {
    await expect(
      runGenerate({ dataDir: ws.dir, users: 1, days: 1, endDate: '2026-11-22', now: clock, out: join(ws.dir, 'gen') }),
    ).rejects.toThrow(/^--end-date 2026-11-22 is after today \(2026-11-21/);
    const cli = spawnSync(
      process.execPath,
      ['jobs/generate.js', '--users', '1', '--days', '1', '--end-date', '9999-01-01', '--data-dir', ws.dir],
      { encoding: 'utf8' },
    );
    expect(cli.status).toBe(2);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toMatch(/--end-date 9999-01-01 is after today/);
    expect(readdirSync(ws.dir)).not.toContain('gen');
  });
});
