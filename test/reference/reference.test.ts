/// <reference types="node" />
// Checks the independent reference implementation against hand-computed expectations
// (test/fixtures/reference/edge-cases.expected.json; arithmetic in edge-cases.notes.md).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { referenceFactors, factorWindow } from './factors.js';
import { referenceStatistics, periodsInRange } from './statistics.js';
import { localInstantMs, parseTimeMs, roundHalfAwayFromZero } from './time.js';
import { haversineMeters, referenceTrip, type RefTrip } from './trip.js';
import { applyOverlaps } from './overlap.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/reference/', import.meta.url));
const ZONE = 'Europe/Berlin';

interface ExpectedTrip {
  line: number;
  orgUserId: string;
  status: string;
  abnormalReason: string;
  localStartDate: string;
  durationInSeconds: number;
  mileageInMeters: number;
  maxSpeedInKmh: number;
  avgSpeedInKmh: number;
  eventCount: number;
  validPoints: number;
  droppedPoints: Record<string, number>;
  quarantinedEvents: Record<string, number>;
  drivingSeconds: number;
  lowSpeedSeconds: number;
  accOver1Seconds: number;
  distractedSeconds: number;
  eveningRushSeconds: number;
  weekdaySeconds: number;
}

interface Expected {
  zone: string;
  validatedAt: string;
  trips: Record<string, ExpectedTrip>;
  rejectedByLine: Record<string, string>;
  factors: {
    orgUserId: string;
    evaluationDate: string;
    intervalDays: 30 | 90;
    expected: Record<string, number | string>;
  }[];
  statisticsScores: Record<string, number>;
  statistics: {
    orgUserId: string;
    type: 'day' | 'week' | 'month';
    startDate: string;
    endDate: string;
    expected: Record<string, number | string>[];
  }[];
}

const lines = readFileSync(`${FIXTURES}edge-cases.ndjson`, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');
const expected = JSON.parse(readFileSync(`${FIXTURES}edge-cases.expected.json`, 'utf8')) as Expected;

// the load's clock: record times more than 10 minutes after it are out of range
const VALIDATED_AT_MS = Date.parse(expected.validatedAt);
const results = lines.map((l) =>
  referenceTrip(JSON.parse(l) as Record<string, unknown>, expected.zone, VALIDATED_AT_MS),
);
// one file: the trips arrive in line order (plausibility rule 5)
const trips: RefTrip[] = applyOverlaps(results.filter((r): r is RefTrip => !('rejected' in r)));

const DOUBLE_DIGITS = 9;

function expectSameRecord(actual: Record<string, unknown>, want: Record<string, number | string>): void {
  for (const [key, value] of Object.entries(want)) {
    if (typeof value === 'number') {
      expect(actual[key], key).toBeTypeOf('number');
      expect(actual[key] as number, key).toBeCloseTo(value, DOUBLE_DIGITS);
    } else {
      expect(actual[key], key).toBe(value);
    }
  }
}

describe('reference implementation: edge-case fixture', () => {
  it('uses Europe/Berlin', () => {
    expect(expected.zone).toBe(ZONE);
  });

  it('every fixture line has an expectation (trip or rejection)', () => {
    const tripLines = Object.values(expected.trips).map((t) => t.line);
    const rejectedLines = Object.keys(expected.rejectedByLine).map(Number);
    const covered = [...tripLines, ...rejectedLines].sort((a, b) => a - b);
    expect(covered).toEqual(lines.map((_, i) => i + 1));
  });

  it.each(Object.entries(expected.rejectedByLine))('line %s is rejected as %s', (line, code) => {
    expect(results[Number(line) - 1]).toEqual({ rejected: code });
  });

  describe.each(Object.entries(expected.trips))('trip %s', (tripId, want) => {
    const got = results[want.line - 1];
    it('is accepted with the expected identity', () => {
      expect(got).toBeDefined();
      expect(got && 'rejected' in got ? got.rejected : null).toBeNull();
      const trip = got as RefTrip;
      expect(trip.tripId).toBe(tripId);
      expect(trip.orgUserId).toBe(want.orgUserId);
      expect(trip.appId).toBe('app-ref');
    });
    it('has the hand-computed status and derived fields', () => {
      // the status is judged over the file's trips (overlapping_trip), the rest per record
      const trip = got as RefTrip;
      expect(trips.find((t) => t.tripId === tripId)?.status).toBe(want.status);
      expect(trips.find((t) => t.tripId === tripId)?.abnormalReason).toBe(want.abnormalReason);
      expect(trip.localStartDate).toBe(want.localStartDate);
      expect(trip.durationInSeconds).toBe(want.durationInSeconds);
      expect(trip.mileageInMeters).toBe(want.mileageInMeters);
      expect(trip.maxSpeedInKmh).toBeCloseTo(want.maxSpeedInKmh, DOUBLE_DIGITS);
      expect(trip.avgSpeedInKmh).toBeCloseTo(want.avgSpeedInKmh, DOUBLE_DIGITS);
      expect(trip.eventCount).toBe(want.eventCount);
      expect(trip.validPoints).toBe(want.validPoints);
      expect(trip.droppedPoints).toEqual(want.droppedPoints);
      expect(trip.quarantinedEvents).toEqual(want.quarantinedEvents);
    });
    it('has the hand-computed factor seconds', () => {
      const trip = got as RefTrip;
      expect(trip.drivingSeconds).toBeCloseTo(want.drivingSeconds, DOUBLE_DIGITS);
      expect(trip.lowSpeedSeconds).toBeCloseTo(want.lowSpeedSeconds, DOUBLE_DIGITS);
      expect(trip.accOver1Seconds).toBeCloseTo(want.accOver1Seconds, DOUBLE_DIGITS);
      expect(trip.distractedSeconds).toBeCloseTo(want.distractedSeconds, DOUBLE_DIGITS);
      expect(trip.eveningRushSeconds).toBeCloseTo(want.eveningRushSeconds, DOUBLE_DIGITS);
      expect(trip.weekdaySeconds).toBeCloseTo(want.weekdaySeconds, DOUBLE_DIGITS);
    });
  });

  it.each(expected.factors.map((f) => [`${f.orgUserId} ${f.evaluationDate} ${f.intervalDays}d`, f] as const))(
    'factors %s',
    (_name, f) => {
      const userTrips = trips.filter((t) => t.orgUserId === f.orgUserId);
      const got = referenceFactors(userTrips, expected.zone, f.evaluationDate, f.intervalDays);
      expectSameRecord(got as unknown as Record<string, unknown>, f.expected);
    },
  );

  it.each(expected.statistics.map((s) => [`${s.orgUserId} ${s.type} ${s.startDate}..${s.endDate}`, s] as const))(
    'statistics %s',
    (_name, s) => {
      const userTrips = trips
        .filter((t) => t.orgUserId === s.orgUserId)
        .map((t) => {
          const score = expected.statisticsScores[t.tripId];
          if (score === undefined) throw new Error(`no score for ${t.tripId}`);
          return { ...t, score };
        });
      const got = referenceStatistics(userTrips, expected.zone, s.type, s.startDate, s.endDate);
      expect(got.length).toBe(s.expected.length);
      got.forEach((entry, i) => {
        expectSameRecord(entry as unknown as Record<string, unknown>, s.expected[i] ?? {});
      });
    },
  );
});

describe('reference implementation: building blocks', () => {
  it('parses record times: epoch ms or ISO 8601 with an offset only', () => {
    expect(parseTimeMs(1781510400000)).toBe(1781510400000);
    expect(parseTimeMs('2026-06-15T10:00:00+02:00')).toBe(1781510400000);
    expect(parseTimeMs('2026-06-15T08:00:00Z')).toBe(1781510400000);
    expect(parseTimeMs('2026-06-15T10:00:00+0200')).toBe(1781510400000);
    expect(parseTimeMs('2026-06-15T10:00+02')).toBe(1781510400000);
    expect(parseTimeMs('2026-06-15T08:00:00.250Z')).toBe(1781510400250);
    expect(parseTimeMs('2026-06-15T10:00:00')).toBeNull(); // no offset
    expect(parseTimeMs('2026-06-15 08:00:00Z')).toBeNull(); // space separator
    expect(parseTimeMs('2026-06-15')).toBeNull(); // date only
    expect(parseTimeMs('08:00:00Z')).toBeNull(); // time only
    expect(parseTimeMs('2026-02-30T08:00:00Z')).toBeNull(); // no such day
    expect(parseTimeMs('1781510400000')).toBeNull(); // numeric string
    expect(parseTimeMs(Number.NaN)).toBeNull();
    expect(parseTimeMs(Number.POSITIVE_INFINITY)).toBeNull();
    expect(parseTimeMs(null)).toBeNull();
    expect(parseTimeMs(undefined)).toBeNull();
    expect(parseTimeMs(true)).toBeNull();
  });

  it('rounds half away from zero', () => {
    expect(roundHalfAwayFromZero(2.5)).toBe(3);
    expect(roundHalfAwayFromZero(-2.5)).toBe(-3);
    expect(roundHalfAwayFromZero(-60.4)).toBe(-60);
    expect(roundHalfAwayFromZero(0.4999)).toBe(0);
  });

  it('haversine along a meridian is R * delta-phi', () => {
    expect(haversineMeters(45, 7, 46, 7)).toBeCloseTo((6371008.8 * Math.PI) / 180, 6);
    expect(haversineMeters(0, 0, 0, 1)).toBeCloseTo((6371008.8 * Math.PI) / 180, 6);
  });

  it('local wall-clock instants across DST use real instants', () => {
    // 2026-03-29 has 23 hours in Berlin, 2026-10-25 has 25.
    expect(localInstantMs('2026-03-30', 0, ZONE) - localInstantMs('2026-03-29', 0, ZONE)).toBe(23 * 3600_000);
    expect(localInstantMs('2026-10-26', 0, ZONE) - localInstantMs('2026-10-25', 0, ZONE)).toBe(25 * 3600_000);
    const w = factorWindow(ZONE, '2026-04-01', 30); // contains the spring-forward day
    expect(w.toMs - w.fromMs).toBe((30 * 24 - 1) * 3600_000);
  });

  it('point and event rules: the first matching code wins; dropped points do not block later duplicates', () => {
    // record times after 2000 (time_out_of_range otherwise); point times are relative to T0
    const T0 = Date.UTC(2026, 5, 1);
    const base = {
      appId: 'x',
      platformUserId: 7,
      orgUserId: 'u',
      tripId: 't',
      os: 'android',
      startTime: T0,
      endTime: T0 + 120_000,
    };
    const r = referenceTrip(
      {
        ...base,
        points: [
          { t: T0 + 200_000, lat: 95, lng: 0, speed: -1 }, // invalid_position (also negative and out of range)
          { t: T0 + 200_000, lat: 0, lng: 0, speed: -1 }, // negative_speed (also out of range)
          { t: T0 + 1_000, lat: 91, lng: 0, speed: 1 }, // invalid_position
          { t: T0 + 1_000, lat: 0, lng: 0, speed: 1 }, // kept: the earlier t=1000 point was dropped
          { t: T0 + 1_000, lat: 0, lng: 0.1, speed: 1 }, // duplicate_time
          { t: T0 + 100_000, lat: 0, lng: 0.01, speed: 1 }, // kept (1112 m in 99 s: plausible)
        ],
        events: [
          { type: 'nope', startTime: 'bad', endTime: 0, startPoint: { lat: 0, lng: 0 }, endPoint: { lat: 0, lng: 0 } },
          { type: 'nope', startTime: 2, endTime: 1, startPoint: { lat: 0, lng: 0 }, endPoint: { lat: 0, lng: 0 } },
          { type: 'brake', startTime: 2, endTime: 1, startPoint: { lat: 0, lng: 0 } },
          { type: 'brake', startTime: 2, endTime: 1, startPoint: { lat: 0, lng: 0 }, endPoint: { lat: 0, lng: 0 } },
        ],
      },
      'UTC',
      T0 + 86_400_000,
    );
    expect('rejected' in r).toBe(false);
    const trip = r as RefTrip;
    expect(trip.droppedPoints).toEqual({ invalid_position: 2, negative_speed: 1, duplicate_time: 1 });
    expect(trip.validPoints).toBe(2);
    expect(trip.quarantinedEvents).toEqual({ invalid_event: 2, unknown_event_type: 1, event_time_inverted: 1 });
    expect(trip.eventCount).toBe(0);
    // 0.01 degree on the equator = 1111.95 m; 120 s
    expect(trip.mileageInMeters).toBe(1112);
    expect(trip.status).toBe('normal');
  });

  it('plausibility: a trip alternating between far places every second keeps only its first and last points', () => {
    const T0 = Date.UTC(2026, 10, 20, 10);
    const points = Array.from({ length: 600 }, (_, i) => ({
      t: T0 + i * 1000,
      lat: i % 2 === 0 ? 80 : -80,
      lng: i % 2 === 0 ? 179 : -179,
      speed: 15,
    }));
    const r = referenceTrip(
      {
        appId: 'x',
        platformUserId: 7,
        orgUserId: 'u',
        tripId: 't',
        os: 'ios',
        startTime: T0,
        endTime: T0 + 599_000,
        points,
      },
      'UTC',
      T0 + 86_400_000,
    ) as RefTrip;
    expect(r.droppedPoints).toEqual({ position_spike: 598 });
    expect(r.validPoints).toBe(2);
    expect(r.mileageInMeters).toBe(Math.round(haversineMeters(80, 179, -80, -179)));
    expect(r).toMatchObject({ status: 'abnormal', abnormalReason: 'speed_implausible', maxSpeedInKmh: 54 });
  });

  it('plausibility: record times from 2000-01-01T00:00:00Z to 10 minutes after the validating moment', () => {
    const at = Date.UTC(2026, 10, 21);
    const rec = (startTime: unknown, endTime: unknown) => ({
      appId: 'x',
      platformUserId: 7,
      orgUserId: 'u',
      tripId: 't',
      os: 'ios',
      startTime,
      endTime,
    });
    const rejected = (r: ReturnType<typeof referenceTrip>) => ('rejected' in r ? r.rejected : null);
    expect(rejected(referenceTrip(rec(Date.UTC(2000, 0, 1), Date.UTC(2000, 0, 1, 0, 1)), 'UTC', at))).toBeNull();
    expect(rejected(referenceTrip(rec(Date.UTC(2000, 0, 1) - 1, Date.UTC(2000, 0, 1, 0, 1)), 'UTC', at))).toBe(
      'time_out_of_range',
    );
    expect(rejected(referenceTrip(rec(at, at + 600_000), 'UTC', at))).toBeNull();
    expect(rejected(referenceTrip(rec(at, at + 600_001), 'UTC', at))).toBe('time_out_of_range');
    expect(rejected(referenceTrip(rec('9999-12-31T00:00:00Z', '9999-12-31T01:00:00Z'), 'UTC', at))).toBe(
      'time_out_of_range',
    );
    // an unparsable time keeps its own reason, which comes first
    expect(rejected(referenceTrip(rec('9999-12-31T00:00:00Z', 'soon'), 'UTC', at))).toBe('invalid_end_time');
  });

  it('statistics: plain mean of scores when the total mileage is 0; week periods clip to the range', () => {
    const t = (startIso: string, score: number, mileage: number): RefTrip & { score: number } => ({
      appId: 'x',
      platformUserId: 1,
      orgUserId: 'u',
      tripId: startIso,
      startMs: parseTimeMs(startIso) as number,
      endMs: (parseTimeMs(startIso) as number) + 600_000,
      status: 'normal',
      abnormalReason: '',
      durationInSeconds: 600,
      mileageInMeters: mileage,
      maxSpeedInKmh: 10,
      avgSpeedInKmh: 0,
      eventCount: 1,
      validPoints: 2,
      droppedPoints: {},
      quarantinedEvents: {},
      drivingSeconds: 0,
      lowSpeedSeconds: 0,
      accOver1Seconds: 0,
      distractedSeconds: 0,
      eveningRushSeconds: 0,
      weekdaySeconds: 0,
      localStartDate: '',
      score,
    });
    const got = referenceStatistics(
      [t('2026-01-01T10:00:00Z', 80, 0), t('2026-01-02T10:00:00Z', 60, 0)],
      'UTC',
      'week',
      '2025-12-31',
      '2026-01-05',
    );
    expect(got.map((s) => [s.startTime, s.endTime])).toEqual([
      ['2025-12-31 00:00:00', '2026-01-04 23:59:59'],
      ['2026-01-05 00:00:00', '2026-01-05 23:59:59'],
    ]);
    expect(got[0]?.score).toBe(70);
    expect(got[0]?.tripCount).toBe(2);
    expect(got[1]?.score).toBe(0);
    expect(periodsInRange('month', '2026-01-31', '2026-03-01')).toEqual([
      { first: '2026-01-31', last: '2026-01-31' },
      { first: '2026-02-01', last: '2026-02-28' },
      { first: '2026-03-01', last: '2026-03-01' },
    ]);
  });
});
