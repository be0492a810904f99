import type { DuckDBConnection } from '@duckdb/node-api';
import { metaValue, setMeta } from './meta.js';

export { inTransaction } from '../db/transaction.js';

/** The warehouse's version: every write that changes what a publish serves raises it by one. */
export async function warehouseVersion(conn: DuckDBConnection): Promise<number> {
  return Number((await metaValue(conn, 'version')) ?? 0);
}

export async function setWarehouseVersion(conn: DuckDBConnection, version: number): Promise<void> {
  await setMeta(conn, 'version', version);
}
