import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { queryFile } from '../db/sql.js';
import { setting } from '../settings.js';
import type { StateDb } from '../state/db.js';
import { resolveDatabaseUrl } from '../state/open.js';
import { addDays, todayIn } from '../time.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { currentCell } from '../cell.js';
import { sendPackage } from './move-package.js';
import { finishMove, leavingDrivers, markExported, moveIdOf, type DriverMove } from './move-record.js';
import { postAndRank } from './rank.js';

/** A driver this cell erases because it moved away (its account stays). */
export interface LeavingDriver extends DriverMove {
  orgUserId: string;
  /** The dates of its scores here: this cell posts its counts of them again once it is erased. */
  scoreDates: string[];
}

/**
 * The source's side of a move, in its purge step (src/purge/purge.ts; docs/decisions.md, Cells):
 * the drivers moved away whose package the target has served for DRIVING_CELL_MOVE_GRACE (or whose
 * account was deleted since), to be erased like deleted accounts but for the account itself, the
 * deletion request and the `user.deleted` event. A driver of which this cell loaded records after
 * its package was written (uploads it had taken in before the move) is not erased now: a further
 * package takes those to the target, and the driver is erased once that one arrived.
 */
export async function leavingForPurge(
  wh: Warehouse,
  state: StateDb,
  dataDir: string,
  now: Date,
): Promise<LeavingDriver[]> {
  const cell = currentCell();
  const url = resolveDatabaseUrl();
  if (!cell || !url) return [];
  const out: LeavingDriver[] = [];
  for (const move of await leavingDrivers(state, cell, now, setting('DRIVING_CELL_MOVE_GRACE'))) {
    const who = { app_id: move.appId, user_id: move.platformUserId };
    if (!move.deleted) {
      const [row] = await queryFile(wh.conn, 'ops/cells/move_max_version', who);
      if (Number(row?.['version'] ?? 0) > (move.exportedVersion ?? 0)) {
        await resend(wh, state, dataDir, url, move, now);
        continue;
      }
    }
    // a deleted driver's counts stay posted until the date is scored again, as a deletion's do
    // without a move: percentiles change at the next score run, never at a purge
    const dates = move.deleted ? [] : await queryFile(wh.conn, 'ops/cells/move_score_dates', who);
    out.push({
      ...move,
      from: cell,
      orgUserId: move.orgUserId || (await orgUserIdHeld(wh, who)),
      scoreDates: dates.map((d) => String(d['d'])),
    });
  }
  return out;
}

/**
 * The orgUserId a deleted driver's rows here carry: the purge matches a record without a valid
 * platformUserId by it, and the account no longer holds it once the target purged the deletion. A
 * value no record carries when there is none (an empty one would match every such record).
 */
async function orgUserIdHeld(wh: Warehouse, who: { app_id: string; user_id: number }): Promise<string> {
  const [row] = await queryFile(wh.conn, 'ops/cells/move_org_user_held', who);
  const org = row?.['org'];
  return typeof org === 'string' && org !== '' ? org : '\u0000no orgUserId';
}

/** Sends a further package of a moving driver: what the source holds of it now. */
async function resend(
  wh: Warehouse,
  state: StateDb,
  dataDir: string,
  url: string,
  move: DriverMove & { orgUserId: string },
  now: Date,
): Promise<void> {
  const { sharedUploadQueue } = await import('../intake/upload-queue.js');
  const moveId = moveIdOf(move.appId, move.platformUserId, now.toISOString());
  const sent = await sendPackage(
    wh,
    await sharedUploadQueue(url),
    {
      moveId,
      appId: move.appId,
      userId: move.platformUserId,
      orgUserId: move.orgUserId,
      from: move.from,
      to: move.to,
    },
    {
      pointsDir: pathsFor(dataDir).pointsDir,
      oldestPointsDate: addDays(todayIn('UTC', now), -jobSettings().pointsRetentionDays),
      carriesCounts: false,
      now,
    },
  );
  await markExported(state, move, moveId, sent.manifest.version);
}

/**
 * After the purge erased them: each move is over (the API answers the driver from its new cell
 * alone), and this cell posts its counts of their scores' dates again, without them.
 */
export async function leftBehind(wh: Warehouse, state: StateDb, erased: LeavingDriver[]): Promise<void> {
  const cell = currentCell();
  if (!cell || erased.length === 0) return;
  for (const move of erased) await finishMove(state, move);
  const dates = new Map<string, { appId: string; date: string }>();
  for (const m of erased)
    for (const date of m.scoreDates) dates.set(`${m.appId}\u0000${date}`, { appId: m.appId, date });
  await postAndRank(wh, state, cell, [...dates.values()]);
}

/** Whether drivers moved away from this cell wait to be erased (the continuous load's poll; false without cells, or when the store does not answer). */
export async function leavingDue(state: StateDb, now = new Date()): Promise<boolean> {
  const cell = currentCell();
  if (!cell) return false;
  return leavingDrivers(state, cell, now, setting('DRIVING_CELL_MOVE_GRACE'))
    .then((found) => found.length > 0)
    .catch(() => false);
}
