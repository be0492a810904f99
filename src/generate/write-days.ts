import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { quoteLiteral, run, sqlText } from '../db/sql.js';
import { buildRecords, type TripRange } from './records.js';

export interface DayFilesOptions {
  outDir: string;
  days: readonly string[];
  ranges: ReadonlyMap<string | null, TripRange>;
  format: 'ndjson' | 'parquet';
  appId: string;
  timeZone: string;
  onProgress?: (message: string) => void;
}

/**
 * Writes one file per local day with COPY: NDJSON (one object per line) or Parquet with the same
 * fields and nesting. Days without trips still get an (empty) file.
 *
 * @example await writeDayFiles(conn, { outDir, days: ['2026-11-20'], ranges, format: 'ndjson', appId, timeZone });
 */
export async function writeDayFiles(conn: DuckDBConnection, options: DayFilesOptions): Promise<string[]> {
  const select = sqlText(`generate/day_${options.format}`);
  const copyFormat = options.format === 'ndjson' ? 'format json' : 'format parquet, compression zstd';
  const files: string[] = [];
  for (const day of options.days) {
    await buildRecords(conn, options.ranges.get(day), options);
    const path = join(options.outDir, `trips-${day}.${options.format}`);
    await run(conn, `copy (\n${select}\n) to ${quoteLiteral(path)} (${copyFormat})`, { time_zone: options.timeZone });
    files.push(path);
    options.onProgress?.(`wrote ${path}`);
  }
  return files;
}
