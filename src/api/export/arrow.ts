import {
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  type Data,
  type DataType,
} from 'apache-arrow';
import { round } from '../http/context.js';
import type { ExportBatch } from './trip-batches.js';

const point = () => new Struct([new Field('lng', new Float64(), false), new Field('lat', new Float64(), false)]);
const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);

const EVENT = new Struct([
  new Field('startPoint', point(), false),
  new Field('endPoint', point(), false),
  text('type'),
  text('startTime'),
  text('endTime'),
  text('description'),
]);

/**
 * The export's Arrow schema: the trip list's fields, the detail's, the user, and the events as a
 * list of structs (points are structs {lng, lat}, as in JSON). `startPoi`/`endPoi` are null where
 * JSON leaves them out; `userId` is an Int64.
 */
export const EXPORT_SCHEMA = new Schema([
  text('tripId'),
  text('orgUserId'),
  new Field('userId', new Int64(), false),
  text('deviceId'),
  text('os'),
  text('status'),
  text('abnormalReason'),
  new Field('eventCount', new Int32(), false),
  new Field('score', new Float64(), false),
  new Field('energy', new Int32(), false),
  new Field('mileageInMeters', new Int32(), false),
  new Field('durationInSeconds', new Int32(), false),
  new Field('avgSpeedInKmh', new Float64(), false),
  new Field('maxSpeedInKmh', new Float64(), false),
  text('startTime'),
  text('endTime'),
  text('coordinate'),
  new Field('isAutoStart', new Bool(), false),
  new Field('isAutoEnd', new Bool(), false),
  new Field('startPoint', point(), false),
  new Field('endPoint', point(), false),
  text('startPoi', true),
  text('endPoi', true),
  new Field('events', new List(new Field('item', EVENT, false)), false),
]);

/** One batch of trips as an Arrow record batch, each column built straight from the batch's columns. */
export function recordBatch(b: ExportBatch): RecordBatch {
  const t = b.trips;
  const e = b.events;
  const at = b.eventOrder;
  const byName: Record<string, Data> = {
    tripId: utf8(t.text('trip_id')),
    orgUserId: utf8(t.text('org_user_id')),
    userId: int64(t.number('user_id')),
    deviceId: utf8(t.text('device_id')),
    os: utf8(t.text('os')),
    status: utf8(t.text('status')),
    abnormalReason: utf8(t.text('abnormal_reason')),
    eventCount: int32(t.number('count_events')),
    score: float64(t.number('score'), 2),
    energy: int32(t.number('energy_g')),
    mileageInMeters: int32(t.number('mileage_m')),
    durationInSeconds: int32(t.number('duration_s')),
    avgSpeedInKmh: float64(t.number('avg_speed_kmh'), 2),
    maxSpeedInKmh: float64(t.number('max_speed_kmh'), 2),
    startTime: utf8(t.text('start_time')),
    endTime: utf8(t.text('end_time')),
    coordinate: utf8(t.text('coordinate')),
    isAutoStart: bool(t.flag('is_auto_start')),
    isAutoEnd: bool(t.flag('is_auto_end')),
    startPoint: pointData(t.number('start_lng'), t.number('start_lat')),
    endPoint: pointData(t.number('end_lng'), t.number('end_lat')),
    startPoi: utf8(t.text('start_poi')),
    endPoi: utf8(t.text('end_poi')),
    events: makeData({
      type: fieldType('events') as List,
      length: b.length,
      nullCount: 0,
      valueOffsets: b.eventOffsets,
      child: makeData({
        type: EVENT,
        length: at.length,
        nullCount: 0,
        children: [
          pointData(e.number('start_lng'), e.number('start_lat'), at),
          pointData(e.number('end_lng'), e.number('end_lat'), at),
          utf8(e.text('type'), at),
          utf8(e.text('start_time'), at),
          utf8(e.text('end_time'), at),
          utf8(e.text('description'), at),
        ],
      }),
    }),
  };
  const children = EXPORT_SCHEMA.fields.map((f) => byName[f.name] as Data);
  return new RecordBatch(
    EXPORT_SCHEMA,
    makeData({ type: new Struct(EXPORT_SCHEMA.fields), length: b.length, nullCount: 0, children }),
  );
}

const fieldType = (name: string): DataType => EXPORT_SCHEMA.fields.find((f) => f.name === name)?.type as DataType;
const POINT = fieldType('startPoint') as Struct;
const encoder = new TextEncoder();
/** The row each value is taken from: `at[i]` when the values are picked (events in trip order), else i. */
const rowOf = (at: Int32Array | undefined, i: number): number => (at ? (at[i] as number) : i);

/**
 * A text column: every value's UTF-8 encoded into one buffer, sized first; nulls marked in a
 * validity bitmap. No string is built for the column: a batch's joined text would be a large
 * object in V8's old generation (over 128 KB), kept until a full collection.
 */
function utf8(values: (string | null)[], at?: Int32Array): Data<Utf8> {
  const length = at ? at.length : values.length;
  const valueOffsets = new Int32Array(length + 1);
  const valid = bitmap(length);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    const value = values[rowOf(at, i)] ?? null;
    if (value === null) nullCount++;
    else valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
    valueOffsets[i + 1] = (valueOffsets[i] as number) + (value === null ? 0 : Buffer.byteLength(value));
  }
  const data = new Uint8Array(valueOffsets[length] as number);
  for (let i = 0; i < length; i++) {
    const value = values[rowOf(at, i)];
    if (value) encoder.encodeInto(value, data.subarray(valueOffsets[i] as number));
  }
  return makeData({
    type: new Utf8(),
    length,
    nullCount,
    nullBitmap: nullCount > 0 ? valid : undefined,
    valueOffsets,
    data,
  });
}

/**
 * A bitmap for `length` values, its bytes rounded up to 64 as apache-arrow's builders size theirs:
 * the IPC writer writes a bitmap whole, so this keeps the stream's bytes those of the builders.
 */
function bitmap(length: number): Uint8Array {
  return new Uint8Array(Math.max(64, Math.ceil(((length + 7) >> 3) / 64) * 64));
}

/** A number column, rounded to `places` when given (as the trip list and detail round). */
function float64(values: Float64Array, places?: number, at?: Int32Array): Data<Float64> {
  const length = at ? at.length : values.length;
  const data = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const value = values[rowOf(at, i)] as number;
    data[i] = places === undefined ? value : round(value, places);
  }
  return makeData({ type: new Float64(), length, nullCount: 0, data });
}

function int32(values: Float64Array): Data<Int32> {
  return makeData({ type: new Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values) });
}

function int64(values: Float64Array): Data<Int64> {
  return makeData({
    type: new Int64(),
    length: values.length,
    nullCount: 0,
    data: BigInt64Array.from(values, (v) => BigInt(v)),
  });
}

function bool(values: boolean[]): Data<Bool> {
  const data = bitmap(values.length);
  for (let i = 0; i < values.length; i++) if (values[i]) data[i >> 3] = (data[i >> 3] as number) | (1 << (i & 7));
  return makeData({ type: new Bool(), length: values.length, nullCount: 0, data });
}

/** Points as structs {lng, lat}. */
function pointData(lng: Float64Array, lat: Float64Array, at?: Int32Array): Data<Struct> {
  const length = at ? at.length : lng.length;
  return makeData({
    type: POINT,
    length,
    nullCount: 0,
    children: [float64(lng, undefined, at), float64(lat, undefined, at)],
  });
}

/**
 * Arrow IPC stream bytes from batches of trips: the schema, then one record batch per batch of
 * trips, then the end-of-stream marker. Pulled by the consumer, so one batch is in memory.
 */
export async function* arrowStream(batches: AsyncIterable<ExportBatch>): AsyncGenerator<Uint8Array> {
  const writer = new RecordBatchStreamWriter();
  const reader = writer[Symbol.asyncIterator]();
  // one read is always outstanding, kept across batches, so no chunk is ever dropped
  let pending = reader.next();
  let wroteAny = false;
  for await (const batch of batches) {
    writer.write(recordBatch(batch));
    wroteAny = true;
    // the writer queues a batch's chunks synchronously on write(): take them before the next batch
    for (;;) {
      const next = await Promise.race([pending, nextTurn()]);
      if (next === TURN || next.done) break;
      yield next.value;
      pending = reader.next();
    }
  }
  // an empty export is still a valid stream: the schema alone
  if (!wroteAny) writer.reset(undefined, EXPORT_SCHEMA);
  writer.finish();
  for (;;) {
    const next = await pending;
    if (next.done) return;
    yield next.value;
    pending = reader.next();
  }
}

const TURN = Symbol('turn');
const nextTurn = () => new Promise<typeof TURN>((resolve) => setImmediate(() => resolve(TURN)));
