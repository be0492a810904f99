import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile, runFile, runScript } from '../db/sql.js';

/**
 * Inside a file's transaction, after its merge: judges the overlap rule (docs/decisions.md, Trip records (load), overlapping trips) again
 * for every trip the merge could have changed, so that a trip's status is a function of the stored
 * trips: a new trip overlapping an earlier normal one becomes `overlapping_trip`, and one that a
 * replaced or re-judged trip no longer overlaps becomes normal again. The changed trips get the
 * file's version (published, announced as `trip.updated`) and their user-days join the statistics
 * the merge recomputes. Returns how many stored trips changed.
 */
export async function judgeOverlaps(conn: DuckDBConnection, version: number): Promise<number> {
  await runScript(conn, 'ops/load/overlap_seed');
  for (;;) {
    const [bounds] = await queryFile(conn, 'ops/load/overlap_bounds');
    if (!bounds || Number(bounds['accounts']) === 0) return 0;
    await runFile(conn, 'ops/load/overlap_widen', {
      from: String(bounds['range_from']),
      to: String(bounds['range_to']),
    });
    const [grown] = await queryFile(conn, 'ops/load/overlap_grown');
    await runFile(conn, 'ops/load/overlap_advance');
    if (Number(grown?.['grown'] ?? 0) === 0) break;
  }
  await runScript(conn, 'ops/load/overlap_judge');
  const [changed] = await queryFile(conn, 'ops/load/overlap_changed');
  const n = Number(changed?.['n'] ?? 0);
  // usually no stored trip changes: nothing to write
  if (n > 0) await runScript(conn, 'ops/load/overlap_apply', { version });
  return n;
}
