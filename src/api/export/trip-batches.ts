import { listValue } from '../../db/duckdb.js';
import { sqlText, type Row } from '../../db/sql.js';
import { point, round } from '../context.js';
import { brief } from '../routes/trips.js';
import { exportStats } from './export-stats.js';
import { tripRowBatches, type ExportSource, type TripRange } from './trip-windows.js';

/** One trip of the bulk export: the trip list's fields, the trip detail's, the user, and the events. */
export type ExportTrip = ReturnType<typeof exportTrip>;

export type ExportQuery = TripRange;

/**
 * The app's trips with their events, oldest first, a batch at a time: each batch's trips one
 * query bounded by a window of start times (trip-windows.ts), its events one query bounded by
 * the batch's times, so a batch's work and memory follow the batch, not the snapshot.
 */
export async function* tripBatches(s: ExportSource, q: ExportQuery): AsyncGenerator<ExportTrip[]> {
  for await (const rows of tripRowBatches(s, q)) {
    exportStats.batchesRead++;
    const events = await batchEvents(s, q, rows);
    yield rows.map((r) => exportTrip(r, events.get(String(r['trip_id'])) ?? []));
  }
}

/**
 * The events of a batch's trips, cut per trip (the rows come sorted by trip, then served order).
 * One query reads the events that start between the batch's first trip start and its last trip
 * end: a few row groups, whatever the snapshot's size. An event's time is not bound to its trip's,
 * so each trip's rows are counted against its eventCount (checked equal at publish), and the trips
 * that fall short, if any, are asked again without the time range.
 */
async function batchEvents(s: ExportSource, q: ExportQuery, trips: Row[]): Promise<Map<string, Row[]>> {
  const from = String(trips[0]?.['started_utc']);
  const to = trips.map((t) => String(t['ended_utc'])).reduce((a, b) => (b > a ? b : a));
  const byTrip = await eventsOf(s, q, trips.map((t) => String(t['trip_id'])), from, to);
  const short = trips.filter((t) => (byTrip.get(String(t['trip_id']))?.length ?? 0) < Number(t['count_events'])).map((t) => String(t['trip_id']));
  if (short.length > 0) for (const [id, list] of await eventsOf(s, q, short, '-infinity', 'infinity')) byTrip.set(id, list);
  return byTrip;
}

async function eventsOf(s: ExportSource, q: ExportQuery, tripIds: string[], from: string, to: string): Promise<Map<string, Row[]>> {
  const rows = await s.query(sqlText('api/export_events'), { app_id: q.appId, zone: q.zone, trip_ids: listValue(tripIds), from, to });
  const byTrip = new Map<string, Row[]>();
  for (const row of rows) {
    const id = String(row['trip_id']);
    const list = byTrip.get(id);
    if (list) list.push(row);
    else byTrip.set(id, [row]);
  }
  return byTrip;
}

/** The same values, rounded the same way, as the trip list and detail serve them. */
function exportTrip(r: Row, events: Row[]) {
  return {
    ...brief(r),
    orgUserId: String(r['org_user_id']),
    userId: Number(r['user_id']),
    abnormalReason: r['abnormal_reason'] as string,
    os: r['os'] as string,
    avgSpeedInKmh: round(r['avg_speed_kmh'], 2),
    maxSpeedInKmh: round(r['max_speed_kmh'], 2),
    coordinate: r['coordinate'] as string,
    isAutoStart: r['is_auto_start'] as boolean,
    isAutoEnd: r['is_auto_end'] as boolean,
    events: events.map((e) => ({
      startPoint: point(e['start_lat'], e['start_lng']), endPoint: point(e['end_lat'], e['end_lng']),
      type: e['type'] as string, startTime: e['start_time'] as string, endTime: e['end_time'] as string, description: e['description'] as string,
    })),
  };
}
