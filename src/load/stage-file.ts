import type { DuckDBConnection } from '@duckdb/node-api';
import { assertRecordColumns } from './parquet-schema.js';
import { materialize, query, queryFile, quoteLiteral, runScript, sqlText } from '../db/sql.js';
import type { LineIndex } from './scan-file.js';
import { appendLineIndex, appendRawLines } from './raw-lines.js';
import { isSdkUploadFile } from './uploads.js';
import { basename } from 'node:path';
import { listValue } from '../db/duckdb.js';
import { createTempView, dropTemp, dropTemps, insertInto } from '../db/statements.js';

/** The models that turn one input file into loadable rows, in dependency order. */
const DERIVE = [
  'models/intermediate/int_trip_records',
  'models/intermediate/int_loadable_records',
  'models/intermediate/int_points',
  'models/intermediate/int_point_intervals',
  'models/intermediate/int_trip_point_metrics',
  'models/intermediate/int_events',
  'models/intermediate/int_trip_distraction',
  'models/intermediate/int_trip_time_factors',
  'models/intermediate/int_trip_content',
] as const;

/** Models read once, by an aggregate: views, so their rows are never stored (a point per row). */
const STREAMED = new Set<string>(['models/intermediate/int_point_intervals']);

const tableOf = (model: string): string => model.split('/').pop() as string;

/** Text a line-by-line parse takes at once: from_json's memory is not spilled (see stg_trip_records.sql). */
const PARSE_BYTES = 64 * 1024 * 1024;

/**
 * Points int_points derives at once. Its window holds a part whole (about 60 bytes a point, then
 * sorted): 8 M points stay well within a 1 GB memory limit, and a day file of up to 8 M points
 * (some 4,000 drivers) is derived in one statement as before.
 */
export const POINTS_PER_PART = 8_000_000;

export type InputFormat = 'ndjson' | 'parquet';

export function formatOf(path: string): InputFormat {
  return /\.parquet$/i.test(path) ? 'parquet' : 'ndjson';
}

/** How a file was staged: NDJSON read whole by DuckDB's reader (`typed`) or line by line. */
export type StagePath = 'parquet' | 'typed' | 'lines';

/**
 * Reads one file into the staging and intermediate temp tables of the connection.
 * `lines` is the NDJSON file's line index from its scan. `int_trips` (which needs the batch's
 * identity) is materialised by the caller. `validatedAt` is the moment record times are judged
 * against (no record time may lie more than 10 minutes after it): the load's clock.
 */
export async function stageFile(
  conn: DuckDBConnection,
  path: string,
  lines: LineIndex | undefined,
  validatedAt: Date,
  parseBytes = PARSE_BYTES,
  pointsPerPart = POINTS_PER_PART,
): Promise<StagePath> {
  let how: StagePath;
  if (formatOf(path) === 'parquet') {
    // the view reads every column of the record: a file without them is refused by name first
    await assertRecordColumns(conn, path);
    // A view, not a copy: each model reads only the columns it needs (the point lists once, in
    // int_points) straight from the file, in row-group-sized pieces, so memory does not grow with
    // the file. A view takes no parameters: the path enters as a quoted literal.
    await createTempView(
      conn,
      'stg_trip_records',
      sqlText('models/staging/stg_trip_records_parquet').replaceAll('$path', quoteLiteral(path)),
    );
    how = 'parquet';
  } else {
    if (!lines) throw new Error(`${path}: staged without its line index`);
    how = (await stageTyped(conn, path, lines)) ? 'typed' : 'lines';
    if (how === 'lines') await stageLines(conn, path, lines, parseBytes);
  }
  if (how !== 'lines') await materialize(conn, 'models/staging/stg_no_lines', {}, 'raw_lines');
  const params = { validated_at: validatedAt.toISOString(), sdk_upload: isSdkUploadFile(basename(path)) };
  await materialize(conn, DERIVE[0], params);
  // only the lines of rejected records are read again, for the quarantine
  if (how === 'typed') await appendRawLines(conn, path, lines as LineIndex, await rejectedLines(conn));
  for (const model of DERIVE.slice(1)) {
    if (model === 'models/intermediate/int_points') await derivePoints(conn, path, how, pointsPerPart);
    else if (STREAMED.has(model)) await createTempView(conn, tableOf(model), sqlText(model));
    else await materialize(conn, model, params);
    // int_points is exact for records without a repeated time; the few others are judged again
    if (model === 'models/intermediate/int_points' && (await anyRepeatedTime(conn)))
      await runScript(conn, 'models/intermediate/int_points_repeated');
  }
  return how;
}

/** Whether a staged point repeats its record's time (sql/models/intermediate/int_points_repeated.sql judges those again). */
async function anyRepeatedTime(conn: DuckDBConnection): Promise<boolean> {
  const [row] = await queryFile(conn, 'ops/load/repeated_time_any');
  return row?.['any'] === true;
}

/**
 * int_points, in one statement for a file of up to `pointsPerPart` points, else a part of the
 * records at a time: every delivered point is first written, typed and judged by its value, to a
 * table as the file streams by (DuckDB spills it to disk beyond its limit; the file is read once,
 * not once per part), then each part's window holds only its own points.
 */
async function derivePoints(
  conn: DuckDBConnection,
  path: string,
  how: StagePath,
  pointsPerPart: number,
): Promise<void> {
  const [counted] =
    how === 'parquet'
      ? await query(conn, sqlText('ops/load/point_count_parquet'), { path })
      : await queryFile(conn, 'ops/load/point_count_staged');
  if (Number(counted?.['points'] ?? 0) <= pointsPerPart) {
    await createTempView(conn, 'int_point_values', sqlText('models/intermediate/int_point_values'));
    await materialize(conn, 'models/intermediate/int_points', { first_line: 0, last_line: Number.MAX_SAFE_INTEGER });
    return;
  }
  await materialize(conn, 'models/intermediate/int_point_values');
  const parts = await query(conn, sqlText('ops/load/point_parts'), { max_points: pointsPerPart });
  for (const [i, part] of parts.entries()) {
    const range = { first_line: Number(part['first_line']), last_line: Number(part['last_line']) };
    if (i === 0) await materialize(conn, 'models/intermediate/int_points', range);
    else await insertInto(conn, 'int_points', sqlText('models/intermediate/int_points'), range);
  }
  if (parts.length === 0) await materialize(conn, 'models/intermediate/int_points', { first_line: 0, last_line: -1 });
  await dropTemp(conn, 'int_point_values');
}

/**
 * The fast path: DuckDB's typed reader over the whole file, then each record's line number from
 * the index. False (and nothing staged) when a line is not a well-typed object: such a file is
 * staged line by line, where each bad line gets its reason.
 */
async function stageTyped(conn: DuckDBConnection, path: string, lines: LineIndex): Promise<boolean> {
  if (!lines.allObjects) return false;
  try {
    await materialize(conn, 'models/staging/stg_trip_records_ndjson', { path }, 'stg_trip_records');
  } catch {
    await dropTemp(conn, 'stg_trip_records');
    return false;
  }
  const [row] = await queryFile(conn, 'ops/load/record_count_staged');
  if (Number(row?.['n']) !== lines.count) {
    await dropTemp(conn, 'stg_trip_records');
    return false;
  }
  await appendLineIndex(conn, lines);
  await runScript(conn, 'models/staging/stg_line_numbers');
  await dropTemp(conn, 'line_index');
  return true;
}

/** The line-by-line path, a range of lines at a time so that memory stays bounded. */
async function stageLines(conn: DuckDBConnection, path: string, lines: LineIndex, parseBytes: number): Promise<void> {
  await materialize(conn, 'models/staging/stg_raw_lines', { path }, 'raw_lines');
  const ranges = lines.ranges(parseBytes);
  if (ranges.length === 0) ranges.push([0, -1]);
  for (const [i, [first, last]] of ranges.entries()) {
    const params = { first_line: first, last_line: last };
    if (i === 0) await materialize(conn, 'models/staging/stg_trip_records', params);
    else await insertInto(conn, 'stg_trip_records', sqlText('models/staging/stg_trip_records'), params);
  }
}

async function rejectedLines(conn: DuckDBConnection): Promise<number[]> {
  const rows = await queryFile(conn, 'ops/load/rejected_lines');
  return rows.map((r) => Number(r['line_no']));
}

/** The temp tables and views a file's staging and merge leave on a connection. */
const STAGED = [
  'stg_trip_records',
  'int_point_values',
  'raw_lines',
  'line_index',
  'repeated_lines',
  'repeated_points',
  'int_trips',
  'scope_user_days',
  'replaced_trips',
  'replaced_copies',
  'overlap_range',
  'overlap_range_next',
  'overlap_judged',
  'overlap_changed_days',
  'resent_records',
  ...DERIVE.map(tableOf),
];

/**
 * Frees the memory the staged file holds before the next file. Which of them exist, and whether
 * as a table or a view (stg_trip_records is a view for Parquet and a table for NDJSON; DROP TABLE
 * refuses a view), is read once, and those are dropped in one call: a statement per name, each
 * tried as a view and then as a table, was some 35 calls a file.
 */
export async function dropStaged(conn: DuckDBConnection): Promise<void> {
  const held = await query(conn, sqlText('ops/load/staged_objects'), { names: listValue(STAGED) });
  await dropTemps(
    conn,
    held.map((r) => ({ name: String(r['name']), kind: r['kind'] === 'view' ? 'view' : 'table' })),
  );
}
