import { sqlText } from '../../db/sql.js';
import type { Period } from '../../serving/periods.js';
import type { ServingPack } from '../../serving/pack.js';
import type { Snapshot } from './snapshot.js';
import {
  scoreRow,
  statisticsRow,
  tripDetailRow,
  tripEventRow,
  tripListRow,
  type ScoreRow,
  type StatisticsRow,
  type TripDetailRow,
  type TripEventRow,
  type TripListRow,
} from './rows.js';

/**
 * The data operations' reads, always scoped to app and user: from the snapshot's serving pack when
 * it has one written in the app's current zone (positioned file reads, no DuckDB), else one bound
 * query per call. Both give the same rows (test/serving/equivalence.test.ts), typed once here
 * (./rows.ts).
 */
export interface Scope {
  appId: string;
  userId: number;
  zone: string;
  /** The cell the user's data lives in (null or absent: no cells). */
  cell?: string | null;
  /** A driver moving into `cell`: the cell it comes from, and `cell`'s version that serves it (null: not yet). */
  moving?: { from: string; arrivedVersion: number | null };
}

export interface TripPageQuery {
  from: Date;
  to: Date;
  afterUs: string;
  afterTrip: string;
  limit: number;
}

const packFor = (s: Snapshot, scope: Scope) => (s.pack?.servesZone(scope.appId, scope.zone) ? s.pack : null);

/**
 * Answers from the pack when it serves this scope, else by SQL. A pack read that fails (a short
 * read, bytes that do not parse) is answered by SQL too, and the pack is not used again for this
 * snapshot: a damaged file never gives a 500.
 */
async function answer<T>(
  s: Snapshot,
  scope: Scope,
  fromPack: (pack: ServingPack) => T | Promise<T>,
  fromSql: () => Promise<T>,
  needsExtras = false,
): Promise<T> {
  const pack = packFor(s, scope);
  if (pack && (!needsExtras || pack.extrasTrusted)) {
    try {
      return await fromPack(pack);
    } catch (error) {
      s.packFailed(error);
    }
  }
  return fromSql();
}

export const tripPage = async (s: Snapshot, scope: Scope, q: TripPageQuery): Promise<TripListRow[]> =>
  (
    await answer(
      s,
      scope,
      (pack) => pack.tripPage(scope, q),
      () =>
        s.query(sqlText('models/serving/api_trip_list'), {
          app_id: scope.appId,
          user_id: scope.userId,
          zone: scope.zone,
          from: q.from.toISOString(),
          to: q.to.toISOString(),
          after_us: BigInt(q.afterUs),
          after_trip: q.afterTrip,
          limit: q.limit,
        }),
    )
  ).map(tripListRow);

export const tripDetail = async (
  s: Snapshot,
  scope: Scope,
  tripId: string,
): Promise<{ trip: TripDetailRow; events: TripEventRow[] } | null> => {
  const found = await answer(
    s,
    scope,
    (pack) => pack.tripDetail(scope, tripId),
    async () => {
      const params = { app_id: scope.appId, user_id: scope.userId, trip_id: tripId, zone: scope.zone };
      const [trip] = await s.query(sqlText('models/serving/api_trip_detail'), params);
      if (!trip) return null;
      return { trip, events: await s.query(sqlText('models/serving/api_trip_events'), params) };
    },
    true,
  );
  return found && { trip: tripDetailRow(found.trip), events: found.events.map(tripEventRow) };
};

export const statistics = async (
  s: Snapshot,
  scope: Scope,
  period: Period,
  startDate: string,
  endDate: string,
): Promise<StatisticsRow[]> =>
  (
    await answer(
      s,
      scope,
      (pack) => pack.statistics(scope, period, startDate, endDate),
      () =>
        s.query(sqlText('models/marts/statistics_periods'), {
          app_id: scope.appId,
          user_id: scope.userId,
          period,
          start_date: startDate,
          end_date: endDate,
        }),
    )
  ).map(statisticsRow);

export const latestScore = async (
  s: Snapshot,
  scope: Scope,
  interval: number,
  today: string,
): Promise<ScoreRow | null> => {
  const row = await answer(
    s,
    scope,
    (pack) => pack.latestScore(scope, interval, today),
    async () => {
      const rows = await s.query(sqlText('models/serving/api_safety_score'), {
        app_id: scope.appId,
        user_id: scope.userId,
        interval,
        today,
        zone: scope.zone,
      });
      return rows[0] ?? null;
    },
  );
  return row && scoreRow(row);
};

export interface ScoreHistoryQuery {
  interval: number;
  startDate: string;
  endDate: string;
  today: string;
}

export const scoreHistory = async (s: Snapshot, scope: Scope, q: ScoreHistoryQuery): Promise<ScoreRow[]> =>
  (
    await answer(
      s,
      scope,
      (pack) => pack.scoreHistory(scope, q.interval, q.startDate, q.endDate, q.today),
      () =>
        s.query(sqlText('models/serving/api_safety_score_history'), {
          app_id: scope.appId,
          user_id: scope.userId,
          interval: q.interval,
          start_date: q.startDate,
          end_date: q.endDate,
          today: q.today,
          zone: scope.zone,
        }),
    )
  ).map(scoreRow);
