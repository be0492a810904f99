import { sqlText, type Params } from '../../db/sql.js';
import { Columns } from './columns.js';

/** What the export reads through: the snapshot's export reader (export-reader.ts). */
export interface ExportSource {
  columns(sql: string, params?: Params): Promise<Columns>;
}

/** What the trip rows of a batch are read by: the app, its zone, the range, the deleted users, the batch size. */
export interface TripRange {
  appId: string;
  zone: string;
  from: Date;
  to: Date;
  /** Deleted accounts: their trips are never exported, even before the purge removed them. */
  excludedUsers: number[];
  batchSize: number;
}

/** The first window's span; later ones follow the trips' density. */
const FIRST_SPAN_MS = 24 * 3600_000;
/** A window is never narrower: more trips than a batch starting within it are paged by the keyset alone. */
const MIN_SPAN_MS = 1_000;

/** `YYYY-MM-DD HH:MM:SS.ffffff+00` (models/serving/api_export_trips.sql's `started_utc`) as milliseconds since the epoch. */
const utcMs = (utc: string): number => Date.parse(`${utc.slice(0, 23).replace(' ', 'T')}Z`);

/**
 * The trip rows of the app's trips in [from, to), oldest first (keyset on start and trip id), in
 * batches of `batchSize` (the last one shorter). Each query also bounds the start from above, by a
 * window of time: without it, each batch's top-N read every trip from its start to the range's end
 * (a cost that grows with the history after the batch, and more memory in DuckDB), with it a few
 * row groups. A window that
 * holds fewer trips than the batch still needs is used up, and the next one starts at its end
 * (inclusive), twice as wide; a full batch sets the next window to twice the time its trips
 * spanned. The caller keeps the snapshot for the whole export, so it is one publish's data.
 */
export async function* tripRowBatches(s: ExportSource, q: TripRange): AsyncGenerator<Columns> {
  const excluded = JSON.stringify(q.excludedUsers);
  const end = q.to.getTime();
  // the start to the microsecond, in UTC: a JavaScript Date would drop the microseconds
  let after = { at: q.from.toISOString(), trip: '', first: true };
  let span = FIRST_SPAN_MS;
  for (;;) {
    // a batch's rows: one part a window
    const parts: Columns[] = [];
    let size = 0;
    let done = false;
    while (size < q.batchSize) {
      const startMs = utcMs(after.at);
      const until = Math.min(startMs + span, end);
      const rows = await s.columns(sqlText('models/serving/api_export_trips'), {
        app_id: q.appId,
        zone: q.zone,
        to: new Date(until).toISOString(),
        excluded_users: excluded,
        after_at: after.at,
        after_trip: after.trip,
        first: after.first,
        limit: q.batchSize - size,
      });
      if (rows.rowCount > 0) parts.push(rows);
      size += rows.rowCount;
      if (size === q.batchSize) {
        const lastStart = String(rows.text('started_utc')[rows.rowCount - 1]);
        span = Math.max(MIN_SPAN_MS, 2 * (utcMs(lastStart) - startMs));
        after = { at: lastStart, trip: String(rows.text('trip_id')[rows.rowCount - 1]), first: false };
        break;
      }
      // every trip of the window after the key is in the batch: the next starts at the window's end
      if (until >= end) {
        done = true;
        break;
      }
      after = { at: new Date(until).toISOString(), trip: '', first: true };
      span *= 2;
    }
    if (size > 0) yield Columns.concat(parts);
    if (done) return;
  }
}
