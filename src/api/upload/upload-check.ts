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
export const instantOf = (v: unknown): number | null => {
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

/** Why a record is refused at upload: the loader's reason code, and for some codes the facts behind it. */
export interface UploadRejection {
  reason: string;
  /** time_out_of_range: the allowed range, the server's time, and the time outside it. */
  detail?: string;
}

/**
 * The first reason a record is refused at upload, or null: the schema's record-level rules, then
 * the record's times against the upload's clock.
 * @example uploadRejection({ tripId: 't', os: 'ios', startTime: 0, endTime: 1 }, new Date()) // { reason: 'time_out_of_range', detail: '...' }
 */
export function uploadRejection(record: unknown, uploadedAt: Date): UploadRejection | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return { reason: 'not_an_object' };
  const r = record as Record<string, unknown>;
  const invalid = schemaRejection(r);
  if (invalid) return { reason: invalid };
  // the schema checks the shape of a time; a shape that names no day (month 13) is caught here
  const start = instantOf(r['startTime']);
  if (start === null) return { reason: 'invalid_start_time' };
  const end = instantOf(r['endTime']);
  if (end === null) return { reason: 'invalid_end_time' };
  const latest = uploadedAt.getTime() + FUTURE_SLACK_MS;
  const inRange = (ms: number) => ms >= EARLIEST_MS && ms <= latest;
  if (!inRange(start))
    return { reason: 'time_out_of_range', detail: timeRangeDetail(uploadedAt, 'startTime', new Date(start)) };
  if (!inRange(end))
    return { reason: 'time_out_of_range', detail: timeRangeDetail(uploadedAt, 'endTime', new Date(end)) };
  return null;
}

/**
 * What a time_out_of_range names: the allowed range, the server's time it follows from, and the
 * time outside it. The load's quarantine says the same of its clock (sql/ops/load/merge_file.sql).
 */
function timeRangeDetail(serverTime: Date, field: string, value: Date): string {
  const latest = new Date(serverTime.getTime() + FUTURE_SLACK_MS).toISOString();
  return (
    `startTime and endTime must lie between ${new Date(EARLIEST_MS).toISOString()} and ${latest} ` +
    `(10 minutes after the server's time, ${serverTime.toISOString()}); ${field} is ${value.toISOString()}`
  );
}
