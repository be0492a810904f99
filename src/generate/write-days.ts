import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type Params, queryFile, quoteLiteral, runFile, sqlText, sqlWith } from '../db/sql.js';
import { buildRecords, type TripRange } from './records.js';
import { copyTo } from '../db/statements.js';

export interface DayFilesOptions {
  outDir: string;
  days: readonly string[];
  format: 'ndjson' | 'parquet';
  appId: string;
  timeZone: string;
  /** The parameters of sql/tools/generate/*.sql (seed, zone, ...); end_date, days and bad_records are set per block here. */
  params: Params;
  users: number;
  /** Build the bad-source trips (the last day's) too, and leave their records in gen_records. */
  badRecords: boolean;
  /** Trips built and written at a time (the memory the generator holds follows this, not users x days). */
  tripsPerPart: number;
  onProgress?: (message: string) => void;
}

export interface DayFilesResult {
  files: string[];
  trips: number;
  points: number;
  events: number;
  abnormalTrips: number;
}

/** The steps that build a part's legs, points and events from its gen_trips (sql/tools/generate/<step>.sql). */
const PART_STEPS = ['legs', 'points', 'events'] as const;

/** At most one progress line about parts this often (a large run writes hundreds of parts). */
const PART_PROGRESS_MS = 10_000;

/** A block's trips (one row each, no points) stay within about this many parts' worth. */
const TRIP_ROWS_PER_BLOCK_PARTS = 32;

/**
 * Writes one file per local day: NDJSON (one object per line) or Parquet with the same fields and
 * nesting. Days without trips still get an (empty) file.
 *
 * Streams: the trips of a block of days are built alone (every value derives from the seed, the
 * user and the day, never from other days), then their points, events and records a part of
 * `tripsPerPart` trips at a time, in the order the files list them. Each day's share of a part is
 * written with COPY, and a day written in several pieces is joined in order (NDJSON: each piece's
 * bytes appended to the day's first piece as it is written; Parquet: the pieces read back in order
 * and written once). A day's file takes its name only once whole. So memory follows the part, not
 * users x days, and each file holds the bytes one COPY of the whole day writes.
 *
 * With `badRecords`, the last day's bad-source trips are built after its file, and their records
 * are left in gen_records for tools/generate/bad_sources.sql.
 */
export async function writeDayFiles(conn: DuckDBConnection, options: DayFilesOptions): Promise<DayFilesResult> {
  const out: DayFilesResult = { files: [], trips: 0, points: 0, events: 0, abnormalTrips: 0 };
  const perBlock = Math.max(1, Math.floor((options.tripsPerPart * TRIP_ROWS_PER_BLOCK_PARTS) / (2 * options.users)));
  let saidAt = Date.now();
  for (let b = 0; b < options.days.length; b += perBlock) {
    const block = options.days.slice(b, b + perBlock);
    const withBad = options.badRecords && b + perBlock >= options.days.length;
    await runFile(conn, 'tools/generate/trips', {
      ...options.params,
      end_date: block[block.length - 1] as string,
      days: block.length,
      bad_records: withBad,
    });
    await runFile(conn, 'tools/generate/day_trips');
    const [counts = {}] = await queryFile(conn, 'tools/generate/part_range');
    const trips = Number(counts['trips'] ?? 0);
    // a block without trips still needs the part tables (empty) that its empty days' records read
    if (trips === 0) await buildPart(conn, 1, 0, options);
    const pieces = new Map<string, string[]>(block.map((d) => [d, []]));
    try {
      for (let first = 1; first <= trips; first += options.tripsPerPart) {
        const ranges = await buildPart(conn, first, Math.min(trips, first + options.tripsPerPart - 1), options);
        const [sums = {}] = await queryFile(conn, 'tools/generate/summary');
        out.trips += Number(sums['trips'] ?? 0);
        out.points += Number(sums['points'] ?? 0);
        out.events += Number(sums['events'] ?? 0);
        out.abnormalTrips += Number(sums['abnormal_trips'] ?? 0);
        for (const [day, range] of ranges.days) {
          const list = pieces.get(day) as string[];
          const piece = join(options.outDir, `.trips-${day}.${options.format}.part${list.length}`);
          await buildRecords(conn, range, options);
          await copyRecords(conn, piece, options);
          // NDJSON lines are self-contained: a later piece is appended to the day's first at once,
          // so the disk holds the day once (not its pieces and then the joined file besides)
          if (options.format === 'ndjson' && list.length > 0) appendPiece(list[0] as string, piece);
          else list.push(piece);
        }
        const done = Math.min(trips, first + options.tripsPerPart - 1);
        if (Date.now() - saidAt >= PART_PROGRESS_MS) {
          saidAt = Date.now();
          const parts = Math.ceil(trips / options.tripsPerPart);
          const part = Math.ceil(done / options.tripsPerPart);
          options.onProgress?.(
            `${block[0]}${block.length > 1 ? `..${block[block.length - 1]}` : ''}: ${done.toLocaleString('en-US')} of ${trips.toLocaleString('en-US')} trips written (part ${part} of ${parts}, ${Math.floor((100 * done) / trips)}%)`,
          );
        }
      }
      for (const day of block) {
        const path = join(options.outDir, `trips-${day}.${options.format}`);
        const list = pieces.get(day) as string[];
        if (list.length === 0) {
          // a day without trips: the (empty) file one COPY of no records writes
          await buildRecords(conn, undefined, options);
          await copyRecords(conn, path, options);
        } else if (list.length === 1) renameSync(list[0] as string, path);
        else await joinParquet(conn, list, path);
        out.files.push(path);
        options.onProgress?.(`wrote ${path}`);
      }
    } finally {
      for (const list of pieces.values()) for (const f of list) rmSync(f, { force: true });
    }
    if (withBad) {
      const bad = Number(counts['bad_source_trips'] ?? 0);
      const ranges = await buildPart(conn, trips + 1, trips + bad, options);
      await buildRecords(conn, ranges.bad, options);
    }
  }
  await runFile(conn, 'tools/generate/day_trips_drop');
  return out;
}

/**
 * gen_trips, gen_legs, gen_points and gen_events of the block's trips numbered first..last; the
 * range of trip_no of each day among them, and of the bad-source trips.
 */
async function buildPart(
  conn: DuckDBConnection,
  first: number,
  last: number,
  options: DayFilesOptions,
): Promise<{ days: Map<string, TripRange>; bad: TripRange | undefined }> {
  await runFile(conn, 'tools/generate/part_trips', { first_out_no: first, last_out_no: last });
  for (const step of PART_STEPS) await runFile(conn, `tools/generate/${step}`, options.params);
  const days = new Map<string, TripRange>();
  let bad: TripRange | undefined;
  for (const row of await queryFile(conn, 'tools/generate/part_trip_nos')) {
    const range = { first: Number(row['first_trip_no']), last: Number(row['last_trip_no']) };
    if (row['is_bad_source'] === true) bad = range;
    else days.set(String(row['trip_day']), range);
  }
  return { days, bad };
}

async function copyRecords(conn: DuckDBConnection, path: string, options: DayFilesOptions): Promise<void> {
  const select = sqlText(`tools/generate/day_${options.format}`);
  const copyFormat = options.format === 'ndjson' ? 'format json' : 'format parquet, compression zstd';
  await copyTo(conn, { query: `\n${select}\n` }, path, copyFormat, { time_zone: options.timeZone });
}

/**
 * A day's Parquet file from its pieces, in order: Parquet has one footer, so the pieces are read
 * back (DuckDB keeps the insertion order) and written as one file.
 */
async function joinParquet(conn: DuckDBConnection, pieces: string[], path: string): Promise<void> {
  const files = `[${pieces.map(quoteLiteral).join(', ')}]`;
  await copyTo(
    conn,
    { query: sqlWith('tools/generate/join_pieces', { files }) },
    path,
    'format parquet, compression zstd',
  );
}

/** One buffer for every piece appended (a large day has hundreds of pieces). */
let copyBuffer: Buffer | undefined;

/** Appends an NDJSON piece's bytes to the file `to` and removes the piece. */
function appendPiece(to: string, piece: string): void {
  const fd = openSync(to, 'a');
  copyBuffer ??= Buffer.allocUnsafe(4 << 20);
  const buffer = copyBuffer;
  try {
    const from = openSync(piece, 'r');
    try {
      for (
        let n = readSync(from, buffer, 0, buffer.length, null);
        n > 0;
        n = readSync(from, buffer, 0, buffer.length, null)
      ) {
        for (let done = 0; done < n; ) done += writeSync(fd, buffer, done, n - done);
      }
    } finally {
      closeSync(from);
    }
  } finally {
    closeSync(fd);
  }
  rmSync(piece);
}
