import { listValue } from '../db/duckdb.js';
import { queryFile, runFile } from '../db/sql.js';
import type { StateDb } from '../state/db.js';
import { inTransaction, setWarehouseVersion, warehouseVersion, type Warehouse } from '../warehouse/warehouse.js';

export interface RankResult {
  /** App-dates whose counts this cell posted. */
  posted: number;
  /** App-dates ranked again against every cell's counts. */
  ranked: number;
  /** Score rows whose percentile changed. */
  changed: number;
}

export const NOTHING_RANKED: RankResult = { posted: 0, ranked: 0, changed: 0 };

/**
 * The percentile across cells (docs/decisions.md, Cells). Each cell posts, for every app and date
 * it scored, its count of drivers per stored score to the shared state store, then ranks its own
 * drivers against its counts and every other cell's; it ranks again whenever another cell posts
 * later (the watch looks at each poll, every load and score run before it publishes). Once each
 * cell has scored a date and ranked after the others' posts, every percentile is the one a single
 * warehouse holding every cell gives: the same counts, the same division.
 */
export async function postAndRank(
  wh: Warehouse,
  state: StateDb,
  cell: string,
  scored: Array<{ appId: string; date: string }>,
): Promise<RankResult> {
  const conn = wh.conn;
  for (const { appId, date } of scored) {
    const rows = await queryFile(conn, 'ops/cells/score_counts', { app_id: appId, evaluation_date: date });
    const counts = rows.map((r) => ({
      interval_days: Number(r['interval_days']),
      safety_score: Number(r['safety_score']),
      drivers: Number(r['drivers']),
    }));
    await state.transaction(async (tx) => {
      const [next] = await tx.all('cell_counts_next');
      const seq = Number(next?.['version']);
      const key = { cell, app_id: appId, evaluation_date: date };
      await tx.run('cell_counts_clear', key);
      if (counts.length > 0) await tx.run('cell_counts_insert', { ...key, seq, rows: JSON.stringify(counts) });
      await tx.run('cell_count_post', { ...key, seq });
    });
  }
  // what the other cells posted since this warehouse last ranked, and what it scored now
  const [ranked] = await queryFile(conn, 'ops/cells/ranked_seq_get');
  const since = Number(ranked?.['seq'] ?? 0);
  const posts = await state.all('cell_posts_since', { cell, seq: since });
  const targets = new Map<string, { appId: string; date: string }>();
  for (const s of scored) targets.set(`${s.appId}\u0000${s.date}`, s);
  let newest = since;
  for (const p of posts) {
    const appId = String(p['app_id']);
    const date = String(p['evaluation_date']);
    targets.set(`${appId}\u0000${date}`, { appId, date });
    newest = Math.max(newest, Number(p['seq']));
  }
  let changed = 0;
  for (const { appId, date } of targets.values()) changed += await rankOne(wh, state, cell, appId, date);
  if (newest > since) await runFile(conn, 'ops/cells/ranked_seq_set', { seq: newest });
  return { posted: scored.length, ranked: targets.size, changed };
}

/** The last count a watch read of what its warehouse ranked against (see rankPending). */
export interface RankedSeen {
  seq: number;
}

/**
 * Whether another cell posted counts this cell's warehouse has not ranked against (the watch's
 * poll). A watch lets its warehouse go while another job (a score run) has its turn, and holds it
 * again only at its next batch: without the warehouse, what it last read of it stands in, so that
 * counts another cell posts meanwhile still bring a batch that ranks them. When the job that had
 * the warehouse ranked them already, that batch changes nothing and publishes nothing new.
 */
export async function rankPending(
  wh: Warehouse | null,
  state: StateDb,
  cell: string,
  seen: RankedSeen = { seq: 0 },
): Promise<boolean> {
  if (wh) {
    const [ranked] = await queryFile(wh.conn, 'ops/cells/ranked_seq_get');
    seen.seq = Number(ranked?.['seq'] ?? 0);
  }
  return (await state.all('cell_posts_since', { cell, seq: seen.seq })).length > 0;
}

/** Ranks one app's drivers as of one date against every cell's counts; the rows changed. */
async function rankOne(wh: Warehouse, state: StateDb, cell: string, appId: string, date: string): Promise<number> {
  const conn = wh.conn;
  const peers = await state.all('cell_counts_of_peers', { cell, app_id: appId, evaluation_date: date });
  await runFile(conn, 'ops/cells/peer_counts_table');
  if (peers.length > 0)
    await runFile(conn, 'ops/cells/peer_counts_insert', {
      interval_days: listValue(peers.map((p) => Number(p['interval_days']))),
      // as JSON text: a list value takes its type from its first number, and a whole score (100)
      // followed by a fraction would not bind
      safety_score: JSON.stringify(peers.map((p) => Number(p['safety_score']))),
      drivers: listValue(peers.map((p) => Number(p['drivers']))),
    });
  const version = (await warehouseVersion(conn)) + 1;
  const changed = await inTransaction(conn, async () => {
    await runFile(conn, 'ops/cells/rank_across_cells', { app_id: appId, evaluation_date: date, version });
    const [row] = await queryFile(conn, 'ops/cells/ranked_rows', { app_id: appId, evaluation_date: date, version });
    const n = Number(row?.['n'] ?? 0);
    // a version only when something changed: the publish has nothing to copy otherwise
    if (n > 0) await setWarehouseVersion(conn, version);
    return n;
  });
  return changed;
}
