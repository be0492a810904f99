import type { Paths } from '../data-folder.js';
import type { Progress } from '../progress.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { eraseToTheBytes, type Erasure } from './erase.js';
import { purgeDeletedUsers, type PurgeResult } from './purge.js';
import { reportPurgeRemovals } from './report.js';

type PurgePaths = Pick<
  Paths,
  'dataDir' | 'pointsDir' | 'routesDir' | 'landingDir' | 'exportsDir' | 'eventsDir' | 'warehouseFile'
>;

/**
 * The purge, a step of every job run that publishes (load, score, purge; docs/jobs.md): the
 * deletion requests pending in the shared state store are acted on (src/purge/purge.ts) and marked
 * purged there. Its caller then publishes (the slots lose the users) and writes its event file
 * (`user.deleted`), and ends with `finishErasure`. `job` names the lines (`load: purged ...`).
 */
export async function runPurge(
  wh: Warehouse,
  paths: PurgePaths,
  now: Date,
  progress: Progress,
  job: string,
): Promise<PurgeResult> {
  // `load: purge: ...`, and for the purge job itself `purge: ...`
  const step = job === 'purge' ? job : `${job}: purge`;
  progress(`${step}: reading deletion requests from the state store`);
  const purged = await purgeDeletedUsers(wh, paths, now);
  if (purged.users > 0) {
    progress(
      `${job}: purged ${purged.users - purged.movedAway} deleted account(s) (${purged.requests} request(s))${purged.movedAway > 0 ? ` and ${purged.movedAway} driver(s) moved to another cell` : ''}: ${purged.trips} trips, ${purged.pointFilesRewritten} points file(s) rewritten`,
    );
  } else {
    progress(`${step}: no deletion request pending`);
  }
  reportPurgeRemovals(purged, progress);
  return purged;
}

/**
 * The purge's last part, the job's last step (after its publish and its event file): erasure
 * reaches the bytes (src/purge/erase.ts). The warehouse file is rewritten, so nothing may write to
 * `wh` after this.
 */
export async function finishErasure(
  wh: Warehouse,
  paths: PurgePaths,
  purged: PurgeResult,
  progress: Progress,
  job: string,
): Promise<Erasure> {
  const erasure = await eraseToTheBytes(wh, paths, purged.purgedUsers);
  if (erasure.warehouse) {
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    progress(
      `${job}: erasure: warehouse rewritten without the deleted rows' bytes (${mb(erasure.warehouse.bytesBefore)} -> ${mb(erasure.warehouse.bytesAfter)} MB in ${erasure.warehouse.seconds.toFixed(2)} s), ${erasure.eventsDropped} pending event(s) dropped${erasure.exportRewritten ? ', export written again' : ''}`,
    );
  }
  return erasure;
}
