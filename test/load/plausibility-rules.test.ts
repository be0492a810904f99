// Plausibility rules 4 and 5 (docs/decisions.md, "Trip records") at their edges, the SQL load against the reference (test/reference) and
// against values worked out by hand: D_pos / D_rep exactly 0.5 and 2 and just outside, D_pos + D_rep
// just under and over 2,000 m, D_rep = 0; overlaps of exactly 60 s and 61 s, an abnormal earlier
// trip, a chain, a trip across midnight, and a replaced earlier trip that frees a later one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { haversineMeters, referenceTrip, type RefTrip } from '../reference/trip.js';
import { referenceOverlaps } from '../reference/overlap.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

const ZONE = 'Europe/Berlin';
const clock = new Date('2026-11-21T09:00:00Z');
// along the equator, steps of exactly 2^-10 degrees of longitude: every step has the same length,
// so sums of steps and of speed x dt (speeds scaled by powers of two) are exact multiples
const STEP_DEG = 2 ** -10;
const STEP_M = haversineMeters(0, 0, 0, STEP_DEG); // 108.59 m
const DT_S = 4;

let ws: Workspace;
/** The records are written before the workspace exists: its app is set as they are used. */
const withApp = (r: Record<string, unknown>) => ({ ...r, appId: ws.appId });

const line = (
  user: number,
  tripId: string,
  startIso: string,
  lngs: number[],
  speedOf: (i: number) => number,
  dtS = DT_S,
) => {
  const startMs = Date.parse(startIso);
  return {
    platformUserId: user,
    orgUserId: `u${user}`,
    tripId,
    os: 'android',
    startTime: startIso,
    endTime: new Date(startMs + (lngs.length - 1) * dtS * 1000).toISOString(),
    points: lngs.map((lng, i) => ({ t: startMs + i * dtS * 1000, lat: 0, lng, speed: speedOf(i) })),
  };
};
const steps = (n: number) => Array.from({ length: n + 1 }, (_, i) => i * STEP_DEG);

const byTrip = async () =>
  new Map(
    (await warehouseRows(ws.paths, 'select trip_id, abnormal_reason from trips')).map((r) => [
      String(r['trip_id']),
      String(r['abnormal_reason']),
    ]),
  );

beforeAll(async () => {
  ws = await workspace(ZONE);
});
afterAll(() => ws.cleanup());

describe('speed_inconsistent (rule 4)', () => {
  // 20 steps: D_pos = 20 x 108.59 = 2171.9 m over 80 s (97.7 km/h)
  const n = 20;
  const cases: [string, Record<string, unknown>, string][] = [
    ['consistent', line(11, 'consistent', '2026-11-02T08:00:00Z', steps(n), () => STEP_M / DT_S), ''],
    // reported speed x dt = 2 x step: D_pos / D_rep = 0.5 exactly (inside)
    ['ratio-half', line(11, 'ratio-half', '2026-11-03T08:00:00Z', steps(n), () => STEP_M / 2), ''],
    [
      'ratio-under-half',
      line(11, 'ratio-under-half', '2026-11-04T08:00:00Z', steps(n), () => (STEP_M / 2) * (1 + 1e-9)),
      'speed_inconsistent',
    ],
    // reported speed x dt = step / 2: the ratio is 2 exactly (inside)
    ['ratio-two', line(11, 'ratio-two', '2026-11-05T08:00:00Z', steps(n), () => STEP_M / 8), ''],
    [
      'ratio-over-two',
      line(11, 'ratio-over-two', '2026-11-06T08:00:00Z', steps(n), () => (STEP_M / 8) * (1 - 1e-9)),
      'speed_inconsistent',
    ],
    // D_rep = 0: outside, once D_pos reaches 2,000 m
    [
      'rep-zero-under',
      line(
        11,
        'rep-zero-under',
        '2026-11-07T08:00:00Z',
        [...steps(18), 18 * STEP_DEG + (1999.5 - 18 * STEP_M) / 111_195.0802],
        () => 0,
      ),
      '',
    ],
    [
      'rep-zero-over',
      line(
        11,
        'rep-zero-over',
        '2026-11-08T08:00:00Z',
        [...steps(18), 18 * STEP_DEG + (2000.5 - 18 * STEP_M) / 111_195.0802],
        () => 0,
      ),
      'speed_inconsistent',
    ],
    // only driving intervals count: the same positions with 20 s between points (GPS gaps) are not judged
    ['gaps-only', line(11, 'gaps-only', '2026-11-09T08:00:00Z', steps(n), () => 0, 20), ''],
  ];

  it('the SQL, the reference and the hand values agree at the edges', async () => {
    await runLoad({
      dataDir: ws.dir,
      inputs: [
        writeNdjson(
          join(ws.dir, 'in', 'speeds.ndjson'),
          cases.map((c) => withApp(c[1])),
        ),
      ],
      now: clock,
    });
    const sql = await byTrip();
    for (const [tripId, record, want] of cases) {
      const ref = referenceTrip(withApp(record), ZONE, clock.getTime()) as RefTrip;
      expect({ tripId, sql: sql.get(tripId), ref: ref.abnormalReason }).toEqual({ tripId, sql: want, ref: want });
    }
    // the hand arithmetic: D_pos + D_rep of the two D_rep = 0 trips straddle 2,000 m
    expect(18 * STEP_M).toBeLessThan(1999.5);
  });
});

describe('overlapping_trip (rule 5)', () => {
  const move = (
    user: number,
    tripId: string,
    startIso: string,
    endIso: string,
    extra: Record<string, unknown> = {},
  ) => {
    const seconds = (Date.parse(endIso) - Date.parse(startIso)) / 1000;
    const lngs = Array.from(
      { length: Math.floor(seconds / DT_S) + 1 },
      (_, i) => (i % 80 < 40 ? i % 80 : 80 - (i % 80)) * STEP_DEG,
    ); // back and forth, one step each 4 s
    const r = line(user, tripId, startIso, lngs, () => STEP_M / DT_S);
    return { ...r, endTime: endIso, ...extra };
  };
  // a trip with one point: too_few_points, whatever it overlaps
  const onePoint = (user: number, tripId: string, startIso: string, endIso: string) => ({
    ...move(user, tripId, startIso, endIso),
    points: [{ t: Date.parse(startIso), lat: 0, lng: 0, speed: 10 }],
  });

  const first = [
    move(21, 'a', '2026-11-10T08:00:00Z', '2026-11-10T08:20:00Z'),
    move(21, 'b-60', '2026-11-10T08:19:00Z', '2026-11-10T08:40:00Z'), // shares exactly 60 s with a: normal
    move(21, 'c-61', '2026-11-10T07:40:00Z', '2026-11-10T08:01:01Z'), // shares 61 s with a: overlapping
    onePoint(21, 'd-abnormal', '2026-11-10T10:00:00Z', '2026-11-10T10:30:00Z'),
    move(21, 'e-after-abnormal', '2026-11-10T10:05:00Z', '2026-11-10T10:25:00Z'), // only the abnormal d overlaps: normal
    move(21, 'f', '2026-11-10T12:00:00Z', '2026-11-10T12:30:00Z'),
    move(21, 'g-over-f', '2026-11-10T12:20:00Z', '2026-11-10T12:50:00Z'), // overlapping
    move(21, 'h-over-g', '2026-11-10T12:40:00Z', '2026-11-10T13:00:00Z'), // overlaps only g, which is abnormal: normal
    // across local midnight (Berlin, UTC+1): 23:50 to 00:20, and 00:00 to 00:30 of the next local day
    move(21, 'i-midnight', '2026-11-10T22:50:00Z', '2026-11-10T23:20:00Z'),
    move(21, 'j-next-day', '2026-11-10T23:00:00Z', '2026-11-10T23:30:00Z'), // overlapping, on another trip date
    move(22, 'k-other-user', '2026-11-10T08:00:00Z', '2026-11-10T08:20:00Z'), // another account: normal
  ];
  const firstWant: Record<string, string> = {
    a: '',
    'b-60': '',
    'c-61': 'overlapping_trip',
    'd-abnormal': 'too_few_points',
    'e-after-abnormal': '',
    f: '',
    'g-over-f': 'overlapping_trip',
    'h-over-g': '',
    'i-midnight': '',
    'j-next-day': 'overlapping_trip',
    'k-other-user': '',
  };

  const referenceOf = (arrived: Record<string, unknown>[]) =>
    referenceOverlaps(
      arrived.map((r) => {
        const t = referenceTrip(withApp(r), ZONE, clock.getTime()) as RefTrip;
        return { ...t, accountKey: `${t.appId}/${t.platformUserId}` };
      }),
    );

  it('is judged in arrival order as the reference and the hand values say', async () => {
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'overlaps-1.ndjson'), first.map(withApp))],
      now: clock,
    });
    const sql = await byTrip();
    const ref = referenceOf(first);
    for (const r of first) {
      const tripId = String(r.tripId);
      expect({ tripId, sql: sql.get(tripId), ref: ref.get(tripId) }).toEqual({
        tripId,
        sql: firstWant[tripId],
        ref: firstWant[tripId],
      });
    }
    const days = await warehouseRows(
      ws.paths,
      "select trip_id, trip_date::varchar as d from trips where trip_id in ('i-midnight', 'j-next-day') order by 1",
    );
    expect(days.map((d) => d['d'])).toEqual(['2026-11-10', '2026-11-11']);
  });

  it('a replaced earlier trip frees the later ones; the statistics of their days follow', async () => {
    const statsOf = async (day: string) =>
      Number(
        (
          await warehouseRows(
            ws.paths,
            `select count_trips from stats_daily where user_id = 21 and stat_date = '${day}'`,
          )
        )[0]?.['count_trips'] ?? 0,
      );
    expect(await statsOf('2026-11-11')).toBe(0);
    // a partner file moves a to the afternoon, makes f abnormal, and moves i an hour earlier
    const second = [
      move(21, 'a', '2026-11-10T15:00:00Z', '2026-11-10T15:20:00Z'),
      onePoint(21, 'f', '2026-11-10T12:00:00Z', '2026-11-10T12:30:00Z'),
      move(21, 'i-midnight', '2026-11-10T21:50:00Z', '2026-11-10T22:20:00Z'),
    ];
    const loaded = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'overlaps-2.ndjson'), second.map(withApp))],
      now: clock,
    });
    expect(loaded.totals.tripsReplaced).toBe(3);
    // the stored trips in arrival order: a replaced trip keeps its first position
    const arrived = first.map((r) => second.find((s) => s.tripId === r.tripId) ?? r);
    const ref = referenceOf(arrived);
    const sql = await byTrip();
    const want: Record<string, string> = {
      ...firstWant,
      'c-61': '',
      f: 'too_few_points',
      'g-over-f': '',
      'h-over-g': 'overlapping_trip',
      'j-next-day': '',
    };
    for (const r of arrived) {
      const tripId = String(r.tripId);
      expect({ tripId, sql: sql.get(tripId), ref: ref.get(tripId) }).toEqual({
        tripId,
        sql: want[tripId],
        ref: want[tripId],
      });
    }
    // j (now normal) counts on its own local day, which the partner file did not touch
    expect(await statsOf('2026-11-11')).toBe(1);
    // the trips that changed carry the file's version: they are published and announced again
    expect(loaded.events.tripUpdated).toBeGreaterThanOrEqual(6);
  });
});
