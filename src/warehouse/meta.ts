import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile, runFile } from '../db/sql.js';

// The meta table of a warehouse or a slot (sql/ops/warehouse/schema.sql, publish/slot_schema.sql):
// key-value rows (schema_digest, warehouse_id, version, the events' versions), read and written
// here only. Each call works on the database in use (`use slot` switches to a slot's).

/** Every meta key and its value. */
export async function readMeta(conn: DuckDBConnection): Promise<Map<string, string>> {
  const rows = await queryFile(conn, 'ops/warehouse/meta_read');
  return new Map(rows.map((r) => [String(r['key']), String(r['value'])]));
}

/** One meta value; undefined when the key is not there. */
export async function metaValue(conn: DuckDBConnection, key: string): Promise<string | undefined> {
  const [row] = await queryFile(conn, 'ops/warehouse/meta_value', { key });
  return row === undefined ? undefined : String(row['value']);
}

/** Sets one meta value (the key is added if it is not there). */
export async function setMeta(conn: DuckDBConnection, key: string, value: string | number): Promise<void> {
  await runFile(conn, 'ops/warehouse/meta_set', { key, value: String(value) });
}

/** Adds a key with its first value; a key already there keeps its value. */
export async function addMeta(conn: DuckDBConnection, key: string, value: string | number): Promise<void> {
  await runFile(conn, 'ops/warehouse/meta_add', { key, value: String(value) });
}
