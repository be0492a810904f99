import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { currentCell } from '../cell.js';
import { dirname } from 'node:path';
import { listValue } from '../db/duckdb.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { materialize, queryFile, quoteLiteral, type Row, runFile, runScript, sqlWith } from '../db/sql.js';
import { RouteFileDamagedError, rewriteRouteFileWithout } from '../route/route-file.js';
import { fsyncDir, fsyncFile } from '../fsutil.js';
import type { Paths } from '../data-folder.js';
import { markPurged, pendingDeletions } from '../state/deletions.js';
import { openState } from '../state/open.js';
import { eraseAccounts } from '../state/erase.js';
import { scrubArchives, type PurgedUser } from './archives.js';
import { pruneIndex } from './index-retention.js';
import { archivesToOpen, driverDays, pointFilesToOpen, routeFilesToOpen } from './index.js';
import { POINTS_PARQUET } from '../load/points-parquet.js';
import { copyTo } from '../db/statements.js';
import { leavingForPurge, leftBehind } from '../cells/move-leave.js';

export interface PurgeResult {
  users: number;
  trips: number;
  pointFilesRewritten: number;
  /** Route files (published/routes) rewritten without the users' trips. */
  routeFilesRewritten: number;
  /** Quarantined raw lines of purged users removed (late records of earlier purges included). */
  quarantined: number;
  /**
   * The files this purge opened to look for the users, and their bytes as stored (each counted
   * once): the ones the index names for them, and any it does not know (src/purge/index.ts).
   */
  opened: Record<'archives' | 'points' | 'routes', { files: number; bytes: number }>;
  /** Archived landing files rewritten without the users' records, and removed (nothing else was in them). */
  archivesRewritten: number;
  archivesRemoved: number;
  /** Archives that could not be read to check (a truncated gzip, a Parquet file without the identity columns): removed. */
  archivesUnreadable: string[];
  /** Route files found damaged while being rewritten: removed (the publish writes them again from the warehouse). */
  routeFilesDamaged: string[];
  /** The accounts purged by this run. */
  purgedUsers: PurgedUser[];
  /** The deletion requests this run acted on (marked purged in the state store). */
  requests: number;
  /** Drivers erased because they moved to another cell (src/cells/move-leave.ts), among `users`. */
  movedAway: number;
}

/**
 * Purges the data of deleted accounts (docs/decisions.md, Deletion, privacy): warehouse rows and quarantined raw
 * lines in one transaction (recorded in purged_users, so the publish drops them from the slots and
 * the serving pack), then the raw points files that held their trips and the archived landing
 * files that held their records are rewritten without them, and the state store keeps no token
 * hash or user id of theirs (src/state/erase.ts). The requests are read from the shared state store
 * (whichever API process or machine recorded them) and marked purged last, in the same state
 * transaction that erases the accounts, so a crash anywhere means the purge simply runs again
 * (every step finds nothing left the second time).
 * Quarantined lines of users purged earlier (late records, rejected as user_deleted) are removed on
 * every run.
 */
export async function purgeDeletedUsers(
  wh: Warehouse,
  paths: Pick<Paths, 'dataDir' | 'pointsDir' | 'routesDir' | 'landingDir' | 'exportsDir'>,
  now: Date,
): Promise<PurgeResult> {
  const conn = wh.conn;
  await pruneIndex(conn, now);
  const state = await openState({ dataDir: paths.dataDir });
  const pending = await pendingDeletions(state, currentCell());
  // with cells: drivers moved away are erased as deleted ones are, their accounts kept
  const leaving = await leavingForPurge(wh, state, paths.dataDir, now);
  if (pending.length === 0 && leaving.length === 0) {
    const quarantined = await scrubQuarantine(conn);
    return {
      users: 0,
      trips: 0,
      pointFilesRewritten: 0,
      routeFilesRewritten: 0,
      quarantined,
      opened: nothingOpened(),
      archivesRewritten: 0,
      archivesRemoved: 0,
      archivesUnreadable: [],
      routeFilesDamaged: [],
      purgedUsers: [],
      requests: 0,
      movedAway: 0,
    };
  }
  await runFile(conn, 'ops/purge/purge_requests');
  // a user deleted twice (a retried DELETE whose first answer was lost) is purged once
  const users = new Map<string, PurgedUser & { requestedAt: string | null }>();
  const userKey = (u: { appId: string; platformUserId: number }) => `${u.appId}\u0000${u.platformUserId}`;
  for (const { appId, platformUserId, orgUserId, requestedAt } of pending)
    users.set(userKey({ appId, platformUserId }), { appId, platformUserId, orgUserId, requestedAt });
  for (const { appId, platformUserId, orgUserId } of leaving)
    if (!users.has(userKey({ appId, platformUserId })))
      users.set(userKey({ appId, platformUserId }), {
        appId,
        platformUserId,
        orgUserId,
        requestedAt: null,
        moved: true,
      });
  for (const request of users.values()) {
    await runFile(conn, 'ops/purge/purge_request_add', {
      app: request.appId,
      user: request.platformUserId,
      org: request.orgUserId,
      at: request.requestedAt,
      moved: request.moved === true,
    });
  }
  await runScript(conn, 'macros/purge');
  await materialize(conn, 'ops/purge/purged_trips');
  const trips = await queryFile(conn, 'ops/purge/purged_trip_list');
  // points first: while the warehouse still has the trips, a crash here is simply repeated. Only
  // the files the index names for the users (or does not know) are opened (src/purge/index.ts)
  const days = await driverDays(conn);
  const tripIds = trips.map((t) => String(t['trip_id']));
  const pointFiles = await pointFilesToOpen(conn, paths.pointsDir, days);
  const points = await rewritePointsWithout(conn, pointFiles, tripIds);
  const routeFiles = await routeFilesToOpen(conn, paths.routesDir, days);
  const damagedRoutes: string[] = [];
  const routes = rewriteRoutesWithout(routeFiles, trips, damagedRoutes);
  const version = (await warehouseVersion(conn)) + 1;
  let quarantined = 0;
  await inTransaction(conn, async () => {
    await runScript(conn, 'ops/purge/purge_users', { version, now: now.toISOString() });
    quarantined = await scrubQuarantine(conn);
    await setWarehouseVersion(conn, version);
  });
  const archives = await scrubArchives(conn, await archivesToOpen(conn, paths.landingDir), [...users.values()], now);
  // last: a purge stopped before this finds the files again by the index
  await runScript(conn, 'ops/purge/forget_indexed');
  // each request with its user's trips removed (a user deleted twice: both requests, the same trips)
  const tripsOf = new Map<string, number>();
  for (const t of trips) {
    const key = userKey({ appId: String(t['app_id']), platformUserId: Number(t['user_id']) });
    tripsOf.set(key, (tripsOf.get(key) ?? 0) + 1);
  }
  // the requests read above, each marked with the wall clock as it is marked (`now` is the batch's
  // start, which a request recorded during the batch may postdate)
  const done = pending.map((r) => ({ id: r.id, trips: tripsOf.get(userKey(r)) ?? 0, requestedAt: r.requestedAt }));
  // a driver that moved keeps its account (its data lives on in its new cell)
  await eraseAccounts(
    state,
    [...users.values()].filter((u) => !u.moved),
    (tx) => markPurged(tx, done, new Date()),
  );
  await leftBehind(wh, state, leaving);
  return {
    requests: pending.length,
    users: users.size,
    trips: trips.length,
    pointFilesRewritten: points.rewritten,
    routeFilesRewritten: routes.rewritten,
    quarantined,
    opened: {
      archives: { files: archives.filesOpened, bytes: archives.bytesRead },
      points: { files: pointFiles.length, bytes: points.bytesRead },
      routes: { files: routeFiles.length, bytes: routes.bytesRead },
    },
    archivesRewritten: archives.filesRewritten,
    archivesRemoved: archives.filesRemoved,
    archivesUnreadable: archives.unreadable,
    routeFilesDamaged: damagedRoutes,
    purgedUsers: [...users.values()].map(({ appId, platformUserId, orgUserId, moved }) => ({
      appId,
      platformUserId,
      orgUserId,
      ...(moved ? { moved } : {}),
    })),
    movedAway: leaving.length,
  };
}

/** Deletes quarantined record lines of every purged user (sql/ops/purge/scrub_quarantine.sql); returns how many. */
async function scrubQuarantine(conn: Warehouse['conn']): Promise<number> {
  const [any] = await queryFile(conn, 'ops/purge/purged_users_any');
  if (any?.['any'] !== true) return 0;
  const [before] = await queryFile(conn, 'ops/purge/quarantine_count');
  await runScript(conn, 'ops/purge/scrub_quarantine');
  const [after] = await queryFile(conn, 'ops/purge/quarantine_count');
  return Number(before?.['n'] ?? 0) - Number(after?.['n'] ?? 0);
}

async function rewritePointsWithout(
  conn: Warehouse['conn'],
  files: string[],
  tripIds: string[],
): Promise<{ rewritten: number; bytesRead: number }> {
  let rewritten = 0;
  let bytesRead = 0;
  for (const file of files) {
    if (!existsSync(file)) continue;
    bytesRead += statSync(file).size;
    const [hit] = await queryFile(conn, 'ops/purge/points_hit', { file, ids: listValue(tripIds) });
    if (Number(hit?.['n'] ?? 0) === 0) continue;
    const tmp = `${file}.purge.tmp`;
    const kept = sqlWith('ops/purge/points_kept', { file: quoteLiteral(file) });
    await copyTo(conn, { query: kept }, tmp, POINTS_PARQUET, { ids: listValue(tripIds) });
    fsyncFile(tmp);
    renameSync(tmp, file);
    fsyncDir(dirname(file));
    rewritten++;
  }
  return { rewritten, bytesRead };
}

/**
 * Route files hold the purged trips of every version that wrote them (a re-sent trip's earlier
 * copy too): each of `files` that holds one is rewritten without them (src/route/route-file.ts).
 */
function rewriteRoutesWithout(
  files: string[],
  trips: Row[],
  damaged: string[],
): { rewritten: number; bytesRead: number } {
  const purged = new Set(trips.map((t) => `${String(t['app_id'])}\u0000${String(t['trip_id'])}`));
  let rewritten = 0;
  let bytesRead = 0;
  const dirs = new Set<string>();
  for (const file of files) {
    if (!existsSync(file)) continue;
    bytesRead += statSync(file).size;
    try {
      if (rewriteRouteFileWithout(file, (app, trip) => purged.has(`${app}\u0000${trip}`))) {
        rewritten++;
        dirs.add(dirname(file));
      }
    } catch (error) {
      // a damaged file is never rewritten (that would seal the damage with fresh checksums) nor
      // kept (it may hold the purged trips): removed, the publish writes it again from the
      // warehouse, which no longer has them
      if (!(error instanceof RouteFileDamagedError)) throw error;
      rmSync(file, { force: true });
      damaged.push(file);
    }
  }
  for (const dir of dirs) fsyncDir(dir);
  return { rewritten, bytesRead };
}

const nothingOpened = (): PurgeResult['opened'] => ({
  archives: { files: 0, bytes: 0 },
  points: { files: 0, bytes: 0 },
  routes: { files: 0, bytes: 0 },
});
