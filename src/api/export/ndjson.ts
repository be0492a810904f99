import { round } from '../http/context.js';
import type { ExportBatch } from './trip-batches.js';

const text = (value: string | null | undefined): string => JSON.stringify(value ?? null);
/** A number as JSON writes it (the values are finite: NULLs are 0, see columns.ts). */
const num = (value: number | undefined): string => JSON.stringify(value ?? null);
const point = (lng: number | undefined, lat: number | undefined): string => `{"lng":${num(lng)},"lat":${num(lat)}}`;

/** Characters of NDJSON handed on at a time: well under V8's large objects (128 KB), which only a full collection frees. */
const CHUNK_CHARS = 32 * 1024;

/**
 * One batch as NDJSON text, a line a trip, written from the batch's columns, in pieces of about
 * CHUNK_CHARS (a whole batch as one string would be a large object). Each line is, byte
 * for byte, `JSON.stringify` of the trip detail's object plus the user and the events: the same
 * keys in the same order (`startPoi`/`endPoi` left out when null), the same rounding.
 */
export function* ndjsonLines(b: ExportBatch): Generator<string> {
  const t = b.trips;
  const e = b.events;
  const c = {
    tripId: t.text('trip_id'),
    deviceId: t.text('device_id'),
    status: t.text('status'),
    eventCount: t.number('count_events'),
    score: t.number('score'),
    energy: t.number('energy_g'),
    mileage: t.number('mileage_m'),
    duration: t.number('duration_s'),
    startTime: t.text('start_time'),
    endTime: t.text('end_time'),
    startLat: t.number('start_lat'),
    startLng: t.number('start_lng'),
    endLat: t.number('end_lat'),
    endLng: t.number('end_lng'),
    startPoi: t.text('start_poi'),
    endPoi: t.text('end_poi'),
    orgUserId: t.text('org_user_id'),
    userId: t.number('user_id'),
    abnormalReason: t.text('abnormal_reason'),
    os: t.text('os'),
    avgSpeed: t.number('avg_speed_kmh'),
    maxSpeed: t.number('max_speed_kmh'),
    coordinate: t.text('coordinate'),
    isAutoStart: t.flag('is_auto_start'),
    isAutoEnd: t.flag('is_auto_end'),
  };
  const ev = {
    type: e.text('type'),
    startTime: e.text('start_time'),
    endTime: e.text('end_time'),
    description: e.text('description'),
    startLat: e.number('start_lat'),
    startLng: e.number('start_lng'),
    endLat: e.number('end_lat'),
    endLng: e.number('end_lng'),
  };
  let lines: string[] = [];
  let chars = 0;
  for (let i = 0; i < b.length; i++) {
    const events: string[] = [];
    for (let k = b.eventOffsets[i] as number; k < (b.eventOffsets[i + 1] as number); k++) {
      const j = b.eventOrder[k] as number;
      events.push(
        `{"startPoint":${point(ev.startLng[j], ev.startLat[j])},"endPoint":${point(ev.endLng[j], ev.endLat[j])},"type":${text(ev.type[j])},` +
          `"startTime":${text(ev.startTime[j])},"endTime":${text(ev.endTime[j])},"description":${text(ev.description[j])}}`,
      );
    }
    const startPoi = c.startPoi[i];
    const endPoi = c.endPoi[i];
    const line =
      `{"tripId":${text(c.tripId[i])},"deviceId":${text(c.deviceId[i])},"status":${text(c.status[i])},"eventCount":${num(c.eventCount[i])},` +
      `"score":${num(round(c.score[i], 2))},"energy":${num(c.energy[i])},"mileageInMeters":${num(c.mileage[i])},"durationInSeconds":${num(c.duration[i])},` +
      `"startTime":${text(c.startTime[i])},"endTime":${text(c.endTime[i])},"startPoint":${point(c.startLng[i], c.startLat[i])},"endPoint":${point(c.endLng[i], c.endLat[i])},` +
      (startPoi == null ? '' : `"startPoi":${text(startPoi)},`) +
      (endPoi == null ? '' : `"endPoi":${text(endPoi)},`) +
      `"orgUserId":${text(c.orgUserId[i])},"userId":${num(c.userId[i])},"abnormalReason":${text(c.abnormalReason[i])},"os":${text(c.os[i])},` +
      `"avgSpeedInKmh":${num(round(c.avgSpeed[i], 2))},"maxSpeedInKmh":${num(round(c.maxSpeed[i], 2))},"coordinate":${text(c.coordinate[i])},` +
      `"isAutoStart":${JSON.stringify(c.isAutoStart[i] ?? null)},"isAutoEnd":${JSON.stringify(c.isAutoEnd[i] ?? null)},"events":[${events.join(',')}]}\n`;
    lines.push(line);
    chars += line.length;
    if (chars >= CHUNK_CHARS) {
      yield lines.join('');
      lines = [];
      chars = 0;
    }
  }
  if (lines.length > 0) yield lines.join('');
}
