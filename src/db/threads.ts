import { positiveInt } from '../config.js';

/**
 * `DRIVING_DUCKDB_THREADS`: the threads each DuckDB database a process opens may use; unset (or 0),
 * DuckDB's own default, one per core. A machine that runs several jobs or API processes at once
 * can give each one thread: with the cores kept busy by other processes, a second thread a
 * database costs more CPU than it saves (the tests run that way: test/README.md).
 */
export function duckdbThreads(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const threads = positiveInt(env['DRIVING_DUCKDB_THREADS'], 0, 'DRIVING_DUCKDB_THREADS');
  return threads === 0 ? undefined : threads;
}

/** The setting for `DuckDBInstance.create`: `{ threads }` when the environment caps them, else nothing. */
export function threadSetting(): { threads?: string } {
  const threads = duckdbThreads();
  return threads === undefined ? {} : { threads: String(threads) };
}
