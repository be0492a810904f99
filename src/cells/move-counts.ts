import type { StateQueries } from '../state/db.js';

/** One stored score of a moved driver that counts in the percentile (a trip in its window). */
export interface CountedScore {
  evaluationDate: string;
  intervalDays: number;
  safetyScore: number;
}

/**
 * The percentile across cells while a driver moves (docs/decisions.md, Cells): in the transaction
 * that records its arrival, the driver's counts leave the source's posted counts and join the
 * target's, so the drivers of every cell are counted once, the driver among them, whichever cell
 * ranks meanwhile. No post is announced: the sums every cell ranks against are unchanged.
 */
export async function carryCounts(
  tx: StateQueries,
  appId: string,
  from: string,
  to: string,
  scores: CountedScore[],
): Promise<void> {
  const dates = new Set<string>();
  for (const s of scores) {
    const key = {
      app_id: appId,
      evaluation_date: s.evaluationDate,
      interval_days: s.intervalDays,
      safety_score: s.safetyScore,
    };
    await tx.run('cell_counts_shift', { ...key, cell: from, n: -1 });
    const added = await tx.run('cell_counts_shift', { ...key, cell: to, n: 1 });
    if (added === 0)
      await tx.run('cell_counts_insert', {
        cell: to,
        app_id: appId,
        evaluation_date: s.evaluationDate,
        seq: 0,
        rows: JSON.stringify([{ interval_days: s.intervalDays, safety_score: s.safetyScore, drivers: 1 }]),
      });
    dates.add(s.evaluationDate);
  }
  for (const date of dates)
    await tx.run('cell_counts_drop_empty', { cell: from, app_id: appId, evaluation_date: date });
}
