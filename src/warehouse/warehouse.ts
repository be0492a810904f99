import type { DuckDBConnection } from '@duckdb/node-api';
import { openDatabase, type Database } from '../db/open.js';
import { installMacros } from '../db/macros.js';
import { query, run, runScript } from '../db/sql.js';
import type { App } from '../apps/store.js';
import { randomUUID } from 'node:crypto';
import { jobSettings } from '../config.js';
import { backfillScoreExplanations } from './score-explain.js';

// the version and transaction helpers live beside the models that use them (score-explain.ts
// among them); re-exported so the warehouse's users keep one import
export { inTransaction, setWarehouseVersion, warehouseVersion } from './version.js';

export interface Warehouse {
  db: Database;
  conn: DuckDBConnection;
  close(): void;
}

/**
 * Opens the warehouse read-write (waiting a while if another job holds it), creates the schema,
 * installs the model macros and mirrors the apps file into the `apps` table the models join.
 */
export async function openWarehouse(
  file: string,
  apps: App[],
  options: { memoryLimit?: string; lockWaitMs?: number } = {},
): Promise<Warehouse> {
  const db = await openDatabase(file, { lockWaitMs: options.lockWaitMs ?? jobSettings().warehouseLockWaitMs, memoryLimit: options.memoryLimit });
  const conn = db.connection;
  try {
    await runScript(conn, 'warehouse/schema');
    await runScript(conn, 'warehouse/trip_rule_columns');
    await installMacros(conn);
    await backfillScoreExplanations(conn);
    await run(conn, "insert into meta values ('warehouse_id', $id) on conflict do nothing", { id: randomUUID() });
    await run(conn, "insert into meta values ('version', '0') on conflict do nothing");
    // user.deleted events start with the warehouse that first knows them: purges done before are
    // not announced (a new warehouse starts at 0)
    await run(conn, "insert into meta select 'user_events_version', value from meta where key = 'version' on conflict do nothing");
    await syncApps(conn, apps);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, conn, close: () => db.close() };
}

async function syncApps(conn: DuckDBConnection, apps: App[]): Promise<void> {
  await run(conn, 'begin transaction');
  try {
    await run(conn, 'delete from apps');
    for (const app of apps) {
      await run(conn, 'insert into apps values ($app_id, $name, $time_zone)', {
        app_id: app.appId,
        name: app.name,
        time_zone: app.timeZone,
      });
    }
    await run(conn, 'commit');
  } catch (error) {
    await run(conn, 'rollback');
    throw error;
  }
}

export async function warehouseId(conn: DuckDBConnection): Promise<string> {
  const rows = await query(conn, "select value from meta where key = 'warehouse_id'");
  return String(rows[0]?.['value']);
}

export async function nextBatchId(conn: DuckDBConnection): Promise<number> {
  const rows = await query(conn, 'select coalesce(max(batch_id), 0) + 1 as id from batches');
  return Number(rows[0]?.['id'] ?? 1);
}
