import { listValue } from '../src/db/duckdb.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/db/open.js';
import { materialize, queryFile, quoteLiteral, run } from '../src/db/sql.js';
import { jobSettings } from '../src/job-settings.js';

export interface BareRead {
  seconds: number;
  points: number;
}

/**
 * Times DuckDB reading the files with nothing but the unnest of points, in a fresh in-memory
 * instance with the jobs' memory limit, so the load's overhead over the engine's floor is visible.
 */
export async function bareRead(format: 'ndjson' | 'parquet', dir: string): Promise<BareRead> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(`.${format}`))
    .sort()
    .map((f) => join(dir, f));
  const db = await openDatabase(':memory:', { memoryLimit: jobSettings().memoryLimit });
  try {
    const t0 = performance.now();
    const [row = {}] = await queryFile(db.connection, `tools/bench/bare_read_${format}`, { files: listValue(files) });
    return { seconds: (performance.now() - t0) / 1000, points: Number(row['points']) };
  } finally {
    db.close();
  }
}

/**
 * Times DuckDB's own sorted ZSTD Parquet write of the files' points (read and typed first,
 * untimed): work every implementation of the load must do besides reading, so bare read + this
 * write is the load's floor.
 */
export async function floorWrite(format: 'ndjson' | 'parquet', dir: string, outDir: string): Promise<number> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(`.${format}`))
    .sort()
    .map((f) => join(dir, f));
  const db = await openDatabase(':memory:', { memoryLimit: jobSettings().memoryLimit });
  try {
    await materialize(db.connection, `tools/bench/floor_points_${format}`, { files: listValue(files) }, 'floor_points');
    const t0 = performance.now();
    await run(
      db.connection,
      `copy (select * from floor_points order by app_id, trip_id, t) to ${quoteLiteral(outDir)} (format parquet, compression zstd, per_thread_output true, overwrite true)`,
    );
    return (performance.now() - t0) / 1000;
  } finally {
    db.close();
  }
}
