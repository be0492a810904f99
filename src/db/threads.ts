import { setting, type Env } from '../settings.js';

/**
 * `DRIVING_DUCKDB_THREADS`: the threads each DuckDB database a process opens may use; unset (or 0),
 * DuckDB's own default, one per core. A machine that runs several jobs or API processes at once
 * can give each one thread: with the cores kept busy by other processes, a second thread a
 * database costs more CPU than it saves (the tests run that way: test/README.md).
 */
export function duckdbThreads(env?: Env): number | undefined {
  const threads = setting('DRIVING_DUCKDB_THREADS', env);
  return threads === 0 ? undefined : threads;
}

/** The setting for `DuckDBInstance.create`: `{ threads }` when the environment caps them, else nothing. */
export function threadSetting(): { threads?: string } {
  const threads = duckdbThreads();
  return threads === undefined ? {} : { threads: String(threads) };
}
