import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { listValue } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { materialize, query, quoteLiteral, run, runScript } from '../db/sql.js';
import { readDeletionRequests, removeDeletionRequests } from './requests.js';

export interface PurgeResult {
  users: number;
  trips: number;
  pointFilesRewritten: number;
}

/**
 * Purges the data of deleted accounts (decisions 8, privacy): warehouse rows in one transaction
 * (recorded in purged_users, so the next publish drops them from the slots), then the raw points
 * files that held their trips are rewritten without them. The request files go last, so a crash
 * anywhere means the purge simply runs again.
 */
export async function purgeDeletedUsers(wh: Warehouse, deletionsDir: string, pointsDir: string, now: Date): Promise<PurgeResult> {
  const pending = readDeletionRequests(deletionsDir);
  if (pending.length === 0) return { users: 0, trips: 0, pointFilesRewritten: 0 };
  const conn = wh.conn;
  await run(conn, 'create or replace temp table purge_requests (app_id varchar, user_id bigint, org_user_id varchar, requested_at timestamptz)');
  for (const { request } of pending) {
    await run(conn, 'insert into purge_requests values ($app, $user, $org, $at)', {
      app: request.appId, user: request.platformUserId, org: request.orgUserId, at: request.requestedAt,
    });
  }
  await materialize(conn, 'purge/purged_trips');
  const trips = await query(conn, 'select trip_id, trip_date from purged_trips');
  // points first: while the warehouse still has the trips, a crash here is simply repeated
  let rewritten = 0;
  for (const day of new Set(trips.map((t) => String(t['trip_date'])))) {
    rewritten += await rewritePointsWithout(conn, join(pointsDir, `trip_date=${day}`), trips.map((t) => String(t['trip_id'])));
  }
  const version = (await warehouseVersion(conn)) + 1;
  await inTransaction(conn, async () => {
    await runScript(conn, 'purge/purge_users', { version, now: now.toISOString() });
    await setWarehouseVersion(conn, version);
  });
  removeDeletionRequests(pending.map((p) => p.file));
  return { users: pending.length, trips: trips.length, pointFilesRewritten: rewritten };
}

async function rewritePointsWithout(conn: Warehouse['conn'], dir: string, tripIds: string[]): Promise<number> {
  if (!existsSync(dir)) return 0;
  let rewritten = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.parquet'))) {
    const file = join(dir, name);
    const [hit] = await query(conn, 'select count(*) as n from read_parquet($file) where list_contains($ids, trip_id)', { file, ids: listValue(tripIds) });
    if (Number(hit?.['n'] ?? 0) === 0) continue;
    const tmp = `${file}.purge.tmp`;
    await run(conn, `copy (select * from read_parquet(${quoteLiteral(file)}) where not list_contains($ids, trip_id)) to ${quoteLiteral(tmp)} (format parquet, compression zstd)`, { ids: listValue(tripIds) });
    renameSync(tmp, file);
    rewritten++;
  }
  return rewritten;
}
