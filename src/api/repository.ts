import { sqlText, type Row } from '../db/sql.js';
import type { Snapshot } from './snapshot.js';

/** The data operations' reads: one bound query per call, always scoped to app and user. */
export interface Scope {
  appId: string;
  userId: number;
  zone: string;
}

export interface TripPageQuery {
  from: Date;
  to: Date;
  afterUs: string;
  afterTrip: string;
  limit: number;
}

export const tripPage = (s: Snapshot, scope: Scope, q: TripPageQuery): Promise<Row[]> =>
  s.query(sqlText('api/trip_list'), {
    app_id: scope.appId, user_id: scope.userId, zone: scope.zone, from: q.from.toISOString(), to: q.to.toISOString(),
    after_us: BigInt(q.afterUs), after_trip: q.afterTrip, limit: q.limit,
  });

export async function tripDetail(s: Snapshot, scope: Scope, tripId: string): Promise<{ trip: Row; events: Row[] } | null> {
  const params = { app_id: scope.appId, user_id: scope.userId, trip_id: tripId, zone: scope.zone };
  const [trip] = await s.query(sqlText('api/trip_detail'), params);
  if (!trip) return null;
  return { trip, events: await s.query(sqlText('api/trip_events'), params) };
}

export const statistics = (s: Snapshot, scope: Scope, period: string, startDate: string, endDate: string): Promise<Row[]> =>
  s.query(sqlText('marts/statistics_periods'), {
    app_id: scope.appId, user_id: scope.userId, period, start_date: startDate, end_date: endDate,
  });

export async function latestScore(s: Snapshot, scope: Scope, interval: number, today: string): Promise<Row | null> {
  const rows = await s.query(sqlText('api/safety_score'), {
    app_id: scope.appId, user_id: scope.userId, interval, today, zone: scope.zone,
  });
  return rows[0] ?? null;
}
