import { tripRecordSchema, tripRecordValidator } from './trip-record-schema.js';

/**
 * The record-level rules of the loader (sql/models/intermediate/int_trip_records.sql) that remain once the
 * identity comes from the token, checked at upload so the SDK hears about a bad record at once.
 * The load job validates again and stays the authority (points and events are judged there).
 */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}(:?\d{2})?)$/;

/** Record times before this, or more than FUTURE_SLACK_MS after the upload, are implausible (docs/decisions.md, Trip records (load)). */
const EARLIEST_MS = Date.UTC(2000, 0, 1);
const FUTURE_SLACK_MS = 10 * 60 * 1000;

/** The instant of a record time (epoch ms or ISO 8601 with an offset), or null when it is not one. */
const instantOf = (v: unknown): number | null => {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 && v < 95617584000000 ? v : null;
  if (typeof v !== 'string' || !ISO_WITH_OFFSET.test(v)) return null;
  const ms = Date.parse(v.replace(' ', 'T'));
  return Number.isNaN(ms) ? null : ms;
};

/** Identity comes from the token at upload; whatever the body says of it is replaced. */
const IDENTITY = new Set(['appId', 'platformUserId', 'orgUserId']);
const PROPERTY_ORDER = Object.keys(tripRecordSchema.properties);

/**
 * The loader's reason for the first property (in the loader's order, which is the schema's) that
 * breaks the record schema, or null. Points and events carry no reason: the load drops a bad point
 * and quarantines a bad event, and neither rejects the record.
 */
function schemaRejection(record: Record<string, unknown>): string | null {
  const validate = tripRecordValidator();
  if (validate(record)) return null;
  let best: { rank: number; reason: string } | null = null;
  for (const error of validate.errors ?? []) {
    const property =
      error.keyword === 'required' && error.instancePath === ''
        ? String((error.params as { missingProperty?: string }).missingProperty)
        : error.instancePath.split('/')[1];
    if (property === undefined || IDENTITY.has(property)) continue;
    const schema = tripRecordSchema.properties[property];
    const reason = schema?.['x-rejectReasonFor']?.[error.keyword] ?? schema?.['x-rejectReason'];
    const rank = PROPERTY_ORDER.indexOf(property);
    if (reason && (best === null || rank < best.rank)) best = { rank, reason };
  }
  return best?.reason ?? null;
}

/**
 * The first reason a record is refused at upload, or null: the schema's record-level rules, then
 * the record's times against the upload's clock.
 * @example uploadRejection({ tripId: 't', os: 'ios', startTime: 0, endTime: 1 }, new Date()) // 'time_out_of_range'
 */
export function uploadRejection(record: unknown, uploadedAt: Date): string | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not_an_object';
  const r = record as Record<string, unknown>;
  const invalid = schemaRejection(r);
  if (invalid) return invalid;
  // the schema checks the shape of a time; a shape that names no day (month 13) is caught here
  const start = instantOf(r['startTime']);
  if (start === null) return 'invalid_start_time';
  const end = instantOf(r['endTime']);
  if (end === null) return 'invalid_end_time';
  const latest = uploadedAt.getTime() + FUTURE_SLACK_MS;
  if (Math.min(start, end) < EARLIEST_MS || Math.max(start, end) > latest) return 'time_out_of_range';
  return null;
}
