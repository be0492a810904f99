/**
 * The record-level rules of the loader (sql/intermediate/int_trip_records.sql) that remain once the
 * identity comes from the token, checked at upload so the SDK hears about a bad record at once.
 * The load job validates again and stays the authority (points and events are judged there).
 */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}(:?\d{2})?)$/;

/** Record times before this, or more than FUTURE_SLACK_MS after the upload, are implausible (decisions 3). */
const EARLIEST_MS = Date.UTC(2000, 0, 1);
const FUTURE_SLACK_MS = 10 * 60 * 1000;

/** The instant of a record time (epoch ms or ISO 8601 with an offset), or null when it is not one. */
const instantOf = (v: unknown): number | null => {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 && v < 95617584000000 ? v : null;
  if (typeof v !== 'string' || !ISO_WITH_OFFSET.test(v)) return null;
  const ms = Date.parse(v.replace(' ', 'T'));
  return Number.isNaN(ms) ? null : ms;
};

/**
 * The first reason a record is refused at upload, or null.
 * @example uploadRejection({ tripId: 't', os: 'ios', startTime: 0, endTime: 1 }, new Date()) // 'time_out_of_range'
 */
export function uploadRejection(record: unknown, uploadedAt: Date): string | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not_an_object';
  const r = record as Record<string, unknown>;
  if (typeof r['tripId'] !== 'string' || r['tripId'] === '') return 'missing_trip_id';
  if (r['tripId'].length > 128) return 'invalid_trip_id';
  if (r['os'] !== 'android' && r['os'] !== 'ios') return 'invalid_os';
  if (r['coordinate'] !== undefined && r['coordinate'] !== null && r['coordinate'] !== 'WGS84' && r['coordinate'] !== 'GCJ02') return 'invalid_coordinate';
  const start = instantOf(r['startTime']);
  if (start === null) return 'invalid_start_time';
  const end = instantOf(r['endTime']);
  if (end === null) return 'invalid_end_time';
  const latest = uploadedAt.getTime() + FUTURE_SLACK_MS;
  if (Math.min(start, end) < EARLIEST_MS || Math.max(start, end) > latest) return 'time_out_of_range';
  return null;
}
