import type { Progress } from '../progress.js';
import { openState, resolveDatabaseUrl } from '../state/open.js';
import { currentCell } from '../cell.js';
import { CellDirectory } from './directory.js';

/**
 * The load's step before it lists the landing area (src/jobs/load.ts): with a cell, the records of
 * other cells' drivers leave for their cells (src/cells/split.ts); nothing without one. The shared
 * store not answering fails the load (the watch tries again): a file not split must not load here.
 */
export async function splitForCells(
  landingDir: string,
  dataDir: string,
  options: { quietMs: number; now: Date },
  progress: Progress,
): Promise<void> {
  const cell = currentCell();
  const url = resolveDatabaseUrl();
  if (!cell || !url) return;
  const [{ splitLanding }, { sharedUploadQueue }] = await Promise.all([
    import('./split.js'),
    import('../intake/upload-queue.js'),
  ]);
  const queue = await sharedUploadQueue(url);
  const result = await splitLanding(landingDir, cell, new CellDirectory(await openState({ dataDir })), queue, options);
  if (result.split > 0)
    progress(
      `load: cell ${cell}: ${result.forwarded} record(s) of ${result.split} file(s) sent to their drivers' cells (${result.pieces} piece(s))`,
    );
}
