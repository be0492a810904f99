import type { DuckDBConnection } from '@duckdb/node-api';
import { query, run } from '../db/sql.js';

/** The warehouse's version: every write that changes what a publish serves raises it by one. */
export async function warehouseVersion(conn: DuckDBConnection): Promise<number> {
  const rows = await query(conn, "select value::bigint as v from meta where key = 'version'");
  return Number(rows[0]?.['v'] ?? 0);
}

export async function setWarehouseVersion(conn: DuckDBConnection, version: number): Promise<void> {
  await run(conn, "update meta set value = $v::varchar where key = 'version'", { v: version });
}

/** Runs `fn` in one transaction: everything it writes lands together or not at all. */
export async function inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
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
