import { basename } from 'node:path';
import type { Paths } from '../data-folder.js';
import { queryFile } from '../db/sql.js';
import type { Progress } from '../progress.js';
import { openState, resolveDatabaseUrl } from '../state/open.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { currentCell } from '../cell.js';
import { carryCounts } from './move-counts.js';
import { importMoves, removePackage, type ImportedMove } from './move-import.js';
import { markArrived } from './move-record.js';

/**
 * The load's step after its take-in (src/jobs/load.ts): with a cell, the packages of drivers moved
 * into it are imported (src/cells/move-import.ts); nothing without one. Their arrival is recorded
 * after the publish (`recordArrivals`).
 */
export async function takeInMoves(
  wh: Warehouse,
  paths: Pick<Paths, 'dataDir' | 'landingDir' | 'pointsDir'>,
  now: Date,
  progress: Progress,
): Promise<ImportedMove[]> {
  const cell = currentCell();
  if (!cell || !resolveDatabaseUrl()) return [];
  const state = await openState({ dataDir: paths.dataDir });
  const isDeleted = async (appId: string, userId: number) =>
    (await state.all('account_is_deleted', { app_id: appId, platform_user_id: userId })).length > 0;
  const imported = await importMoves(wh, paths.landingDir, paths.pointsDir, isDeleted, now, (name, reason) =>
    progress(
      `load: cell ${cell}: moved driver's package ${name} removed, not imported: ${reason}; run cells.js move again on the source cell`,
    ),
  );
  for (const m of imported)
    progress(
      `load: cell ${cell}: moved driver ${m.manifest.userId} of app ${m.manifest.appId} from cell ${m.manifest.from}: ${m.trips} trip(s) imported as version ${m.version}`,
    );
  return imported;
}

/**
 * After the publish that serves them: each imported package's arrival is recorded with the
 * published version (the API answers the driver from this cell once its copy serves it, and the
 * source may erase its own after the grace), the first package's percentile counts are carried
 * over (src/cells/move-counts.ts), and its files leave the landing area. The shared store not
 * answering leaves the files for the next run, which records the arrival then.
 */
export async function recordArrivals(
  wh: Warehouse,
  dataDir: string,
  imported: ImportedMove[],
  publishedVersion: number,
  progress: Progress,
): Promise<void> {
  const cell = currentCell();
  if (!cell || imported.length === 0) return;
  const state = await openState({ dataDir });
  for (const m of imported) {
    const { manifest } = m;
    // not served yet (a publish that did not take this version): the next run records it
    if (publishedVersion < m.version) continue;
    const scoresFile = m.files.find((f) => basename(f) === manifest.files.safety_scores.name);
    const scores = scoresFile ? await queryFile(wh.conn, 'ops/cells/move_counted_scores', { file: scoresFile }) : [];
    const now = new Date();
    const first = await state.transaction(async (tx) => {
      const arrived = await markArrived(
        tx,
        { appId: manifest.appId, platformUserId: manifest.userId, to: cell, moveId: manifest.moveId },
        publishedVersion,
        now,
      );
      if (arrived && manifest.carriesCounts)
        await carryCounts(
          tx,
          manifest.appId,
          manifest.from,
          cell,
          scores.map((s) => ({
            evaluationDate: String(s['evaluation_date']),
            intervalDays: Number(s['interval_days']),
            safetyScore: Number(s['safety_score']),
          })),
        );
      return arrived;
    });
    removePackage(m.files);
    if (first)
      progress(
        `load: cell ${cell}: moved driver ${manifest.userId} of app ${manifest.appId} served from version ${publishedVersion}: cell ${manifest.from} may erase its copy`,
      );
  }
}
