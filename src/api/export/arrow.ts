import { Bool, Field, Float64, Int32, Int64, List, makeData, RecordBatch, RecordBatchStreamWriter, Schema, Struct, Utf8, vectorFromArray, type DataType } from 'apache-arrow';
import type { ExportTrip } from './trip-batches.js';

const point = () => new Struct([new Field('lng', new Float64(), false), new Field('lat', new Float64(), false)]);
const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);

const EVENT = new Struct([
  new Field('startPoint', point(), false), new Field('endPoint', point(), false), text('type'), text('startTime'), text('endTime'), text('description'),
]);

/**
 * The export's Arrow schema: the trip list's fields, the detail's, the user, and the events as a
 * list of structs (points are structs {lng, lat}, as in JSON). `startPoi`/`endPoi` are null where
 * JSON leaves them out; `userId` is an Int64.
 */
export const EXPORT_SCHEMA = new Schema([
  text('tripId'), text('orgUserId'), new Field('userId', new Int64(), false), text('deviceId'), text('os'), text('status'), text('abnormalReason'),
  new Field('eventCount', new Int32(), false), new Field('score', new Float64(), false), new Field('energy', new Int32(), false),
  new Field('mileageInMeters', new Int32(), false), new Field('durationInSeconds', new Int32(), false),
  new Field('avgSpeedInKmh', new Float64(), false), new Field('maxSpeedInKmh', new Float64(), false),
  text('startTime'), text('endTime'), text('coordinate'), new Field('isAutoStart', new Bool(), false), new Field('isAutoEnd', new Bool(), false),
  new Field('startPoint', point(), false), new Field('endPoint', point(), false), text('startPoi', true), text('endPoi', true),
  new Field('events', new List(new Field('item', EVENT, false)), false),
]);

function fieldOf(trip: ExportTrip, name: string): unknown {
  if (name === 'userId') return BigInt(trip.userId);
  const value = (trip as Record<string, unknown>)[name];
  return value === undefined ? null : value;
}

/** One batch of trips as an Arrow record batch. */
export function recordBatch(trips: ExportTrip[]): RecordBatch {
  const children = EXPORT_SCHEMA.fields.map((f) => vectorFromArray(trips.map((t) => fieldOf(t, f.name)), f.type as DataType).data[0]!);
  return new RecordBatch(EXPORT_SCHEMA, makeData({ type: new Struct(EXPORT_SCHEMA.fields), length: trips.length, nullCount: 0, children }));
}

/**
 * Arrow IPC stream bytes from batches of trips: the schema, then one record batch per batch of
 * trips, then the end-of-stream marker. Pulled by the consumer, so one batch is in memory.
 */
export async function* arrowStream(batches: AsyncIterable<ExportTrip[]>): AsyncGenerator<Uint8Array> {
  const writer = new RecordBatchStreamWriter();
  const reader = writer[Symbol.asyncIterator]();
  // one read is always outstanding, kept across batches, so no chunk is ever dropped
  let pending = reader.next();
  let wroteAny = false;
  for await (const trips of batches) {
    writer.write(recordBatch(trips));
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
