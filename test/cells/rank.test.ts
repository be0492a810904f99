// The percentile across cells (src/cells/rank.ts) against a real PostgreSQL: another cell's posted
// counts are read into this cell's warehouse whatever their scores, a whole score (100) before a
// fraction included; a watch that let its warehouse go (another job's turn) still sees a later post.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTHING_RANKED, postAndRank, rankPending } from '../../src/cells/rank.js';
import { query } from '../../src/db/sql.js';
import { appsOf } from '../../src/jobs/data-dir.js';
import type { StateDb } from '../../src/state/db.js';
import { closeStates, openState } from '../../src/state/open.js';
import { openWarehouse, type Warehouse } from '../../src/warehouse/warehouse.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const DATE = '2026-11-20';

let server: PgServer;
let ws: Workspace;
let state: StateDb;
let wh: Warehouse;

/** Cell b posts its counts of the app and date: one row per score, in the order given. */
async function post(scores: number[]): Promise<void> {
  await state.transaction(async (tx) => {
    const [next] = await tx.all('cell_counts_next');
    const seq = Number(next?.['version']);
    const key = { cell: 'b', app_id: ws.appId, evaluation_date: DATE };
    await tx.run('cell_counts_clear', key);
    const rows = scores.map((safety_score) => ({ interval_days: 30, safety_score, drivers: 1 }));
    await tx.run('cell_counts_insert', { ...key, seq, rows: JSON.stringify(rows) });
    await tx.run('cell_count_post', { ...key, seq });
  });
}

beforeAll(async () => {
  server = await startPostgres();
  ws = await workspace('UTC');
  state = await openState({ dataDir: ws.dir, databaseUrl: await server.database() });
  wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir));
});

afterAll(async () => {
  wh?.close();
  await closeStates();
  await server?.stop();
  ws?.cleanup();
});

describe('ranking against the other cells', () => {
  it("reads another cell's counts of any scores, a whole one first", async () => {
    expect(await rankPending(wh, state, 'a')).toBe(false);
    await post([100, 92.5, 0, 71.25]);
    expect(await rankPending(wh, state, 'a')).toBe(true);
    const ranked = await postAndRank(wh, state, 'a', []);
    expect(ranked).toEqual({ ...NOTHING_RANKED, ranked: 1 });
    expect(
      (await query(wh.conn, 'select safety_score from peer_score_counts order by 1')).map((r) => r['safety_score']),
    ).toEqual([0, 71.25, 92.5, 100]);
    expect(await rankPending(wh, state, 'a')).toBe(false);
  });

  it('a post made while the warehouse was let go is seen from what the warehouse held last', async () => {
    const seen = { seq: 0 };
    expect(await rankPending(wh, state, 'a', seen)).toBe(false);
    expect(seen.seq).toBeGreaterThan(0);
    await post([88]);
    expect(await rankPending(null, state, 'a', seen)).toBe(true);
    await postAndRank(wh, state, 'a', []);
    expect(await rankPending(wh, state, 'a', seen)).toBe(false);
    expect(await rankPending(null, state, 'a', seen)).toBe(false);
  });
});
