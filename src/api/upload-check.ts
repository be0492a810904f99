/**
 * The record-level rules of the loader (sql/intermediate/int_trip_records.sql) that remain once the
 * identity comes from the token, checked at upload so the SDK hears about a bad record at once.
 * The load job validates again and stays the authority (points and events are judged there).
 */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}(:?\d{2})?)$/;

const validTime = (v: unknown): boolean =>
  (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v < 95617584000000) ||
  (typeof v === 'string' && ISO_WITH_OFFSET.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))));

export function uploadRejection(record: unknown): string | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not_an_object';
  const r = record as Record<string, unknown>;
  if (typeof r['tripId'] !== 'string' || r['tripId'] === '') return 'missing_trip_id';
  if (r['tripId'].length > 128) return 'invalid_trip_id';
  if (r['os'] !== 'android' && r['os'] !== 'ios') return 'invalid_os';
  if (r['coordinate'] !== undefined && r['coordinate'] !== null && r['coordinate'] !== 'WGS84' && r['coordinate'] !== 'GCJ02') return 'invalid_coordinate';
  if (!validTime(r['startTime'])) return 'invalid_start_time';
  if (!validTime(r['endTime'])) return 'invalid_end_time';
  return null;
}
