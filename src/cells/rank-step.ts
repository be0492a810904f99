import { firstLine } from '../errors.js';
import { isMachineError } from '../machine-error.js';
import type { Progress } from '../progress.js';
import { openState } from '../state/open.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { currentCell } from '../cell.js';
import { NOTHING_RANKED, postAndRank, type RankResult } from './rank.js';

/**
 * A job's step before it publishes (src/cells/rank.ts): with a cell, posts the counts of the dates
 * it scored and ranks again what other cells posted since; nothing without one. The score job
 * fails when the shared store does not answer (its counts must reach the other cells: run it
 * again); a load goes on and ranks at its next run.
 */
export async function rankAcrossCells(
  wh: Warehouse,
  dataDir: string,
  scored: Array<{ appId: string; date: string }>,
  progress: Progress,
  job: 'load' | 'score',
): Promise<RankResult> {
  const cell = currentCell();
  if (!cell) return NOTHING_RANKED;
  try {
    const result = await postAndRank(wh, await openState({ dataDir }), cell, scored);
    if (result.posted > 0 || result.changed > 0)
      progress(
        `${job}: cell ${cell}: ${result.posted} app-date(s) of score counts posted, ${result.ranked} ranked against every cell (${result.changed} percentile(s) changed)`,
      );
    return result;
  } catch (error) {
    if (job === 'score' || isMachineError(error)) throw error;
    progress(
      `${job}: cell ${cell}: percentiles not ranked against the other cells now (${firstLine(error)}): at the next run`,
    );
    return NOTHING_RANKED;
  }
}
