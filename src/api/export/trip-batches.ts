import { listValue } from '../../db/duckdb.js';
import { sqlText } from '../../db/sql.js';
import { Columns } from './columns.js';
import { exportStats } from './export-stats.js';
import { tripRowBatches, type ExportSource, type TripRange } from './trip-windows.js';

/**
 * One batch of the bulk export, as columns (columns.ts): the trips' rows (models/serving/api_export_trips.sql),
 * their events' rows (models/serving/api_export_events.sql), and where each trip's events are. Arrow and NDJSON
 * are written from these without an object per trip or event.
 */
export interface ExportBatch {
  /** Trips in the batch. */
  length: number;
  trips: Columns;
  events: Columns;
  /** Trip i's events are rows eventOrder[eventOffsets[i]] to eventOrder[eventOffsets[i + 1] - 1] of `events`, in served order. */
  eventOffsets: Int32Array;
  eventOrder: Int32Array;
}

export type ExportQuery = TripRange;

/**
 * The app's trips with their events, oldest first, a batch at a time: each batch's trips one
 * query bounded by a window of start times (trip-windows.ts), its events one query bounded by
 * the batch's times, so a batch's work and memory follow the batch, not the snapshot.
 */
export async function* tripBatches(s: ExportSource, q: ExportQuery): AsyncGenerator<ExportBatch> {
  for await (const trips of tripRowBatches(s, q)) {
    exportStats.batchesRead++;
    yield await withEvents(s, q, trips);
  }
}

/**
 * The batch's trips with their events (the rows come sorted by trip, then served order, so each
 * trip's are one run of rows). One query reads the events that start between the batch's first
 * trip start and its last trip end: a few row groups, whatever the snapshot's size. An event's
 * time is not bound to its trip's, so each trip's rows are counted against its eventCount
 * (checked equal at publish), and the trips that fall short, if any, are asked again without the
 * time range.
 */
async function withEvents(s: ExportSource, q: ExportQuery, trips: Columns): Promise<ExportBatch> {
  const ids = trips.text('trip_id') as string[];
  const from = String(trips.text('started_utc')[0]);
  const to = (trips.text('ended_utc') as string[]).reduce((a, b) => (b > a ? b : a));
  let events = await eventsOf(s, q, ids, from, to);
  // each trip's run of event rows, by the trip's index in the batch: [first row, count]
  const runs = runsByTrip(events, 0, (pos) => pos);
  const counts = trips.number('count_events');
  const short: number[] = [];
  for (let i = 0; i < trips.rowCount; i++) if ((runs[i]?.[1] ?? 0) < (counts[i] as number)) short.push(i);
  if (short.length > 0) {
    const more = await eventsOf(
      s,
      q,
      short.map((i) => ids[i] as string),
      '-infinity',
      'infinity',
    );
    runsByTrip(more, events.rowCount, (pos) => short[pos] as number, runs);
    events = Columns.concat([events, more]);
  }
  const eventOffsets = new Int32Array(trips.rowCount + 1);
  for (let i = 0; i < trips.rowCount; i++) eventOffsets[i + 1] = (eventOffsets[i] as number) + (runs[i]?.[1] ?? 0);
  const eventOrder = new Int32Array(eventOffsets[trips.rowCount] as number);
  for (let i = 0; i < trips.rowCount; i++) {
    const run = runs[i];
    if (run) for (let k = 0; k < run[1]; k++) eventOrder[(eventOffsets[i] as number) + k] = run[0] + k;
  }
  return { length: trips.rowCount, trips, events, eventOffsets, eventOrder };
}

function eventsOf(s: ExportSource, q: ExportQuery, tripIds: string[], from: string, to: string): Promise<Columns> {
  return s.columns(sqlText('models/serving/api_export_events'), {
    app_id: q.appId,
    zone: q.zone,
    trip_ids: listValue(tripIds),
    from,
    to,
  });
}

/**
 * Each trip's run of event rows (the rows come by trip position, `trip_pos`, 1-based in the ids
 * asked for), set at the trip's index in the batch (`batchIndex` of the 0-based position), as
 * [first row + `offset`, count].
 */
function runsByTrip(
  events: Columns,
  offset: number,
  batchIndex: (pos: number) => number,
  runs: ([number, number] | undefined)[] = [],
): ([number, number] | undefined)[] {
  const positions = events.number('trip_pos');
  let run: [number, number] | undefined;
  for (let row = 0; row < events.rowCount; row++) {
    if (row > 0 && positions[row] === positions[row - 1]) (run as [number, number])[1]++;
    else {
      run = [row + offset, 1];
      runs[batchIndex((positions[row] as number) - 1)] = run;
    }
  }
  return runs;
}
