import type { DuckDBConnection } from '@duckdb/node-api';
import { run } from './sql.js';

/** Runs `fn` in one transaction: everything it writes lands together or not at all. */
export async function inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  // transaction control is the connection's, not a query: the one place it is written
  await run(conn, 'begin transaction');
  try {
    const result = await fn();
    await run(conn, 'commit');
    return result;
  } catch (error) {
    await run(conn, 'rollback').catch(() => undefined);
    throw error;
  }
}
