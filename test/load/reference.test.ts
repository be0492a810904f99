// The SQL pipeline against an independent plain-TypeScript implementation (test/reference) and
// against values computed by hand (test/fixtures/reference/edge-cases.*): DST days, midnight,
// 17:00 and 20:00 edges, Friday into Saturday, window edges, overlapping phone events, out-of-order
// and duplicate points, every drop, quarantine and abnormal rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { openDatabase } from '../../src/db/open.js';
import { query, sqlText } from '../../src/db/sql.js';
import { installMacros } from '../../src/db/macros.js';
import { referenceTrip, type RefTrip } from '../reference/trip.js';
import { applyOverlaps } from '../reference/overlap.js';
import { referenceFactors } from '../reference/factors.js';
import { referenceStatistics } from '../reference/statistics.js';
import { readFixture, warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'reference', 'edge-cases.ndjson');
const EXPECTED = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reference', 'edge-cases.expected.json'), 'utf8'),
);
const ZONE = 'Europe/Berlin';

let ws: Workspace;
let records: Record<string, unknown>[];
let refTrips: RefTrip[];
let sqlTrips: Map<string, Record<string, unknown>>;

beforeAll(async () => {
  ws = await workspace(ZONE);
  records = readFixture(FIXTURE, ws.appId);
  const loadedAt = new Date(EXPECTED.validatedAt);
  await runLoad({
    dataDir: ws.dir,
    inputs: [writeNdjson(join(ws.dir, 'in', 'edge-cases.ndjson'), records)],
    now: loadedAt,
  });
  // the fixture is one file: its trips arrive in line order
  refTrips = applyOverlaps(
    records.map((r) => referenceTrip(r, ZONE, loadedAt.getTime())).filter((t): t is RefTrip => !('rejected' in t)),
  );
  const rows = await warehouseRows(ws.paths, 'select * from trips');
  sqlTrips = new Map(rows.map((r) => [String(r['trip_id']), r]));
});
afterAll(() => ws.cleanup());

describe('trip derivation (SQL) equals the reference and the hand-computed values', () => {
  it('loads exactly the trips the reference accepts and rejects the rest for the same reason', async () => {
    expect([...sqlTrips.keys()].sort()).toEqual(refTrips.map((t) => t.tripId).sort());
    const quarantined = await warehouseRows(ws.paths, "select line_no, reason from quarantine where kind = 'record'");
    const byLine = Object.fromEntries(quarantined.map((q) => [String(q['line_no']), q['reason']]));
    expect(byLine).toEqual(EXPECTED.rejectedByLine);
  });

  it('derives every field as the reference does', () => {
    for (const ref of refTrips) {
      const row = sqlTrips.get(ref.tripId)!;
      const expected = EXPECTED.trips[ref.tripId];
      const actual = {
        status: row['status'],
        abnormalReason: row['abnormal_reason'],
        localStartDate: row['trip_date'],
        durationInSeconds: Number(row['duration_s']),
        mileageInMeters: Number(row['mileage_m']),
        eventCount: row['count_events'],
        validPoints: row['count_points'],
      };
      const want = {
        status: ref.status,
        abnormalReason: ref.abnormalReason,
        localStartDate: ref.localStartDate,
        durationInSeconds: ref.durationInSeconds,
        mileageInMeters: ref.mileageInMeters,
        eventCount: ref.eventCount,
        validPoints: ref.validPoints,
      };
      expect({ trip: ref.tripId, ...actual }).toEqual({ trip: ref.tripId, ...want });
      for (const [column, field] of [
        ['max_speed_kmh', 'maxSpeedInKmh'],
        ['driving_seconds', 'drivingSeconds'],
        ['low_speed_seconds', 'lowSpeedSeconds'],
        ['acc_over_1_seconds', 'accOver1Seconds'],
        ['distracted_seconds', 'distractedSeconds'],
        ['evening_rush_seconds', 'eveningRushSeconds'],
        ['weekday_seconds', 'weekdaySeconds'],
      ] as const) {
        expect(Number(row[column]), `${ref.tripId}.${field}`).toBeCloseTo(ref[field] as number, 6);
        if (expected) expect(Number(row[column]), `${ref.tripId}.${field} (by hand)`).toBeCloseTo(expected[field], 6);
      }
      // an inverted trip has no meaningful speed; the service reports 0 where the duration is not positive
      if (ref.durationInSeconds > 0) expect(Number(row['avg_speed_kmh'])).toBeCloseTo(ref.avgSpeedInKmh, 6);
      else expect(Number(row['avg_speed_kmh'])).toBe(0);
    }
  });

  it('counts dropped points and quarantined events as the reference does', async () => {
    const drops: Record<string, number> = {};
    const events: Record<string, number> = {};
    for (const ref of refTrips) {
      for (const [k, n] of Object.entries(ref.droppedPoints)) drops[k] = (drops[k] ?? 0) + n;
      for (const [k, n] of Object.entries(ref.quarantinedEvents)) events[k] = (events[k] ?? 0) + n;
    }
    const sqlDrops = await warehouseRows(
      ws.paths,
      'select reason, sum(count_points)::int as n from point_drops group by all',
    );
    const sqlEvents = await warehouseRows(
      ws.paths,
      "select reason, count(*)::int as n from quarantine where kind = 'event' group by all",
    );
    expect(Object.fromEntries(sqlDrops.map((r) => [r['reason'], r['n']]))).toEqual(drops);
    expect(Object.fromEntries(sqlEvents.map((r) => [r['reason'], r['n']]))).toEqual(events);
  });
});

describe('safety-score factors (SQL) equal the reference and the hand-computed values', () => {
  for (const factorCase of EXPECTED.factors as {
    orgUserId: string;
    evaluationDate: string;
    intervalDays: 30 | 90;
    expected: Record<string, number | string>;
  }[]) {
    it(`${factorCase.orgUserId}, ${factorCase.intervalDays} days as of ${factorCase.evaluationDate}`, async () => {
      await runScore({ dataDir: ws.dir, date: factorCase.evaluationDate, now: new Date('2026-11-21T03:00:00Z') });
      const mine = refTrips.filter((t) => t.orgUserId === factorCase.orgUserId);
      const ref = referenceFactors(mine, ZONE, factorCase.evaluationDate, factorCase.intervalDays);
      const rows = await warehouseRows(
        ws.paths,
        `select * from safety_scores where org_user_id = '${factorCase.orgUserId}' and evaluation_date = '${factorCase.evaluationDate}' and interval_days = ${factorCase.intervalDays}`,
      );
      if (ref.tripCount === 0) {
        expect(rows).toHaveLength(0);
        return;
      }
      const row = rows[0]!;
      const actual = {
        windowStart: String(row['window_start_local']),
        windowEnd: String(row['window_end_local']),
        tripCount: row['count_trips'],
        totalSeconds: Number(row['total_seconds']),
        mileageInMeters: Number(row['mileage_m']),
        eventCount: Number(row['count_events']),
      };
      for (const want of [ref, factorCase.expected]) {
        expect(actual).toEqual({
          windowStart: want.windowStart,
          windowEnd: want.windowEnd,
          tripCount: want.tripCount,
          totalSeconds: want.totalSeconds,
          mileageInMeters: want.mileageInMeters,
          eventCount: want.eventCount,
        });
        for (const [column, field] of [
          ['distracted_driving', 'distractedDriving'],
          ['evening_rush_hour', 'eveningRushHour'],
          ['weekday_driving', 'weekdayDriving'],
          ['low_speed', 'lowSpeed'],
          ['acclong_abs_1', 'acclongAbs1'],
        ] as const) {
          expect(Number(row[column]), field).toBeCloseTo(Number(want[field]), 9);
        }
      }
    });
  }
});

describe('period statistics (SQL) equal the reference', () => {
  for (const statCase of EXPECTED.statistics as {
    orgUserId: string;
    type: 'day' | 'week' | 'month';
    startDate: string;
    endDate: string;
  }[]) {
    it(`${statCase.orgUserId} by ${statCase.type} from ${statCase.startDate} to ${statCase.endDate}`, async () => {
      const userTrips = refTrips
        .filter((t) => t.orgUserId === statCase.orgUserId)
        .map((t) => ({ ...t, score: Number(sqlTrips.get(t.tripId)!['score']) }));
      const ref = referenceStatistics(userTrips, ZONE, statCase.type, statCase.startDate, statCase.endDate);
      const db = await openDatabase(ws.paths.warehouseFile, { readOnly: true });
      await installMacros(db.connection);
      try {
        const rows = await query(db.connection, sqlText('models/marts/statistics_periods'), {
          app_id: ws.appId,
          user_id: userTrips[0]!.platformUserId,
          period: statCase.type,
          start_date: statCase.startDate,
          end_date: statCase.endDate,
        });
        expect(rows.map((r) => `${r['period_start']} 00:00:00`)).toEqual(ref.map((s) => s.startTime));
        expect(rows.map((r) => `${r['period_end']} 23:59:59`)).toEqual(ref.map((s) => s.endTime));
        rows.forEach((row, i) => {
          const want = ref[i]!;
          expect([
            row['count_trips'],
            Number(row['mileage_m']),
            Number(row['count_events']),
            Number(row['duration_s']),
          ]).toEqual([want.tripCount, want.mileageInMeters, want.eventCount, want.durationInSeconds]);
          expect(Number(row['max_speed_kmh'])).toBeCloseTo(want.maxSpeedInKmh, 9);
          expect(Number(row['avg_speed_kmh'])).toBeCloseTo(want.avgSpeedInKmh, 9);
          expect(Number(row['score'])).toBeCloseTo(want.score, 9);
        });
      } finally {
        db.close();
      }
    });
  }
});
