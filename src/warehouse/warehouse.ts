import type { DuckDBConnection } from '@duckdb/node-api';
import { openDatabase, type Database } from '../db/open.js';
import { installMacros } from '../db/macros.js';
import { isMissingTable, queryFile, runFile, runScript, sqlText } from '../db/sql.js';
import { inTransaction } from '../db/transaction.js';
import { addMeta, metaValue, readMeta, setMeta } from './meta.js';
import type { App } from '../apps/store.js';
import { createHash, randomUUID } from 'node:crypto';
import { jobSettings } from '../job-settings.js';
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
  options: { memoryLimit?: string; lockWaitMs?: number; threads?: number } = {},
): Promise<Warehouse> {
  const db = await openDatabase(file, {
    lockWaitMs: options.lockWaitMs ?? jobSettings().warehouseLockWaitMs,
    memoryLimit: options.memoryLimit,
    threads: options.threads,
  });
  const conn = db.connection;
  try {
    // the schema and its migrations run once per version of them: each migration is a scan or a
    // write (a commit, an fsync) that every later open of the same schema would pay for nothing
    const digest = schemaDigest();
    // the macros first: the backfill of score explanations computes with them
    await installMacros(conn);
    let known = await openingMeta(conn);
    if (known?.get('schema_digest') !== digest) {
      await runScript(conn, 'ops/warehouse/schema');
      await runScript(conn, 'ops/warehouse/trip_rule_columns');
      await runScript(conn, 'ops/warehouse/event_versions');
      await runScript(conn, 'ops/warehouse/quarantine_columns');
      await backfillScoreExplanations(conn);
      await setMeta(conn, 'schema_digest', digest);
      known = (await openingMeta(conn)) ?? new Map();
    }
    // each write is a commit with an fsync of the log: on an existing warehouse these are known
    if (!known.has('warehouse_id')) await addMeta(conn, 'warehouse_id', randomUUID());
    if (!known.has('version')) await addMeta(conn, 'version', '0');
    // user.deleted events start with the warehouse that first knows them: purges done before are
    // not announced (a new warehouse starts at 0)
    if (!known.has('user_events_version')) await runFile(conn, 'ops/warehouse/meta_user_events_start');
    await syncApps(conn, apps);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, conn, close: () => db.close() };
}

/** The SHA-256 of the files that make the warehouse's schema: a warehouse whose meta records it has them applied. */
function schemaDigest(): string {
  const hash = createHash('sha256');
  for (const file of SCHEMA_FILES) hash.update(sqlText(file)).update('\0');
  return hash.digest('hex');
}

/** Every statement an open runs on a warehouse whose schema is not current, in order. */
const SCHEMA_FILES = [
  'ops/warehouse/schema',
  'ops/warehouse/trip_rule_columns',
  'ops/warehouse/event_versions',
  'ops/warehouse/quarantine_columns',
  'ops/warehouse/score_explain_columns',
  'ops/warehouse/score_explain_backfill',
] as const;

/**
 * The meta keys an open needs (the schema digest a warehouse recorded, none before digests; the
 * keys every warehouse gets once), in one query; null for a new warehouse, which has no meta table.
 */
async function openingMeta(conn: DuckDBConnection): Promise<Map<string, string> | null> {
  // asked directly: a lookup in duckdb_tables() first was a second statement of every open; a
  // new warehouse's error is the one answer that means "no meta table", any other is said as it is
  return readMeta(conn).catch((error: unknown) => {
    if (isMissingTable(error, 'meta')) return null;
    throw error;
  });
}

/** Mirrors the apps into a warehouse held open across runs (the continuous load), as an open does. */
export async function refreshApps(wh: Warehouse, apps: App[]): Promise<void> {
  await syncApps(wh.conn, apps);
}

async function syncApps(conn: DuckDBConnection, apps: App[]): Promise<void> {
  const held = await queryFile(conn, 'ops/warehouse/apps_read');
  const wanted = [...apps]
    .sort((x, y) => (x.appId < y.appId ? -1 : x.appId > y.appId ? 1 : 0))
    .map((a) => ({ app_id: a.appId, name: a.name, time_zone: a.timeZone }));
  // unchanged (every run but the first after an app is added or changed): no write, no commit
  if (JSON.stringify(held) === JSON.stringify(wanted)) return;
  await inTransaction(conn, async () => {
    await runFile(conn, 'ops/warehouse/apps_clear');
    for (const app of apps)
      await runFile(conn, 'ops/warehouse/apps_insert', { app_id: app.appId, name: app.name, time_zone: app.timeZone });
  });
}

export async function warehouseId(conn: DuckDBConnection): Promise<string> {
  return String(await metaValue(conn, 'warehouse_id'));
}

export async function nextBatchId(conn: DuckDBConnection): Promise<number> {
  const rows = await queryFile(conn, 'ops/warehouse/batch_next');
  return Number(rows[0]?.['id'] ?? 1);
}
