// The analysts' Parquet exports of cells read as one dataset (docs/decisions.md, Cells): two cells
// (load.js, score.js with --cell on one real PostgreSQL), a third begun once every driver had a
// cell (its export holds no trip), and a reference data folder without cells holding every record,
// loaded from the same partner file dropped on cell a. Each cell's export.js --cell, copied into one
// folder (a subfolder each, or merged into one tree) or given as --parquet repeated, gives through
// sql.js the reference export's rows: every table, percentile included, the analyses of
// sql/analyses/ and the marts' models. A cell's purge writes its export again in its cell's layout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { runSqlOnExport } from '../../src/jobs/sql.js';
import { closeUploadQueues } from '../../src/intake/upload-queue.js';
import { recordDeletion } from '../../src/state/deletions.js';
import { closeStates, openState } from '../../src/state/open.js';
import { ROOT, runJobProcess } from '../helpers/job-process.js';
import { oneFile } from '../helpers/one-file.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { copyState } from '../helpers/cells.js';

const SCORE_DATE = '2026-11-21';
const SQL = (name: string) => join(ROOT, 'sql', `${name}.sql`);
/**
 * Where and when each warehouse took a row in (the cell that did not receive the partner file
 * loaded its drivers' records from the pieces forwarded to it, in another batch, at another time),
 * and the trip's content digest, salted with a secret of each warehouse's own.
 */
const BOOKKEEPING: Record<string, string[]> = {
  apps: [],
  trips: [
    'source_file',
    'source_line',
    'file_key',
    'batch_id',
    'loaded_at',
    'version',
    'arrival_batch_id',
    'arrival_line',
    'content_hash',
  ],
  trip_events: ['version'],
  stats_daily: ['version'],
  safety_scores: ['version', 'evaluated_at'],
};

let server: PgServer;
let url: string;
let refUrl: string;
let appId: string;
const dirs: string[] = [];
let cellA: string;
let cellB: string;
/** A cell begun after the drivers were given theirs: its export holds no trip. */
let cellC: string;
let ref: string;
/** The folders the exports are copied into: a subfolder each, and one merged tree. */
let gathered: string;
let merged: string;
let queries: string;

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-cell-exports-${name}-`));
  dirs.push(dir);
  return dir;
};

async function job(name: string, dataDir: string, db: string, ...args: string[]): Promise<string> {
  const ran = await runJobProcess(name, ['--data-dir', dataDir, ...args], {
    DATABASE_URL: db,
    DRIVING_LOAD_CONCURRENCY: '1',
  });
  if (ran.code !== 0) throw new Error(`${name} ${args.join(' ')} exited ${ran.code}: ${ran.stderr.slice(-3000)}`);
  return ran.stdout;
}

/**
 * A file's rows on an export (or several), in one order whatever order they were read in. A sum of
 * doubles a model computes may differ in its last bits with the order DuckDB's threads add the
 * rows in, on one export as on several: fractions are compared to 12 significant digits.
 */
async function rowsOf(parquet: string | string[], file: string, params: string[] = []): Promise<string[]> {
  const { rows } = await runSqlOnExport({ parquet, file, params });
  const digits = (_: string, v: unknown) =>
    typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v;
  return rows
    .map((r) =>
      JSON.stringify(
        Object.fromEntries(
          Object.keys(r)
            .sort()
            .map((k) => [k, r[k]]),
        ),
        digits,
      ),
    )
    .sort();
}

/** A SELECT of a table's rows but for where and when a warehouse took them in. */
function tableQuery(table: string): string {
  const file = join(queries, `${table}.sql`);
  const left = BOOKKEEPING[table] as string[];
  writeFileSync(file, `select *${left.length > 0 ? ` exclude (${left.join(', ')})` : ''} from ${table}\n`);
  return file;
}

beforeAll(async () => {
  server = await startPostgres();
  url = await server.database();
  refUrl = await server.database();
  cellA = folder('a');
  cellB = folder('b');
  cellC = folder('c');
  ref = folder('ref');
  queries = folder('queries');
  appId = (
    await new AppStore({ dataDir: cellA, databaseUrl: url }).add({ name: 'Fleet', timeZone: 'America/New_York' })
  ).appId;
  // each cell's first job registers it
  await job('load', cellA, url, '--cell', 'a');
  await job('load', cellB, url, '--cell', 'b');
  const gen = folder('gen');
  const args = ['--users', '10', '--days', '5', '--end-date', '2026-11-20', '--seed', '7', '--out', gen];
  await job('generate', cellA, url, '--cell', 'a', ...args);
  const file = oneFile(gen);
  // the reference: one warehouse, the same apps and accounts, every record
  await openState({ dataDir: ref, databaseUrl: refUrl });
  await copyState(url, refUrl);
  mkdirSync(pathsFor(ref).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(ref).landingDir, 'partner.ndjson'));
  await job('load', ref, refUrl);
  await job('score', ref, refUrl, '--date', SCORE_DATE);
  // the cells: the partner file dropped on cell a only
  mkdirSync(pathsFor(cellA).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(cellA).landingDir, 'partner.ndjson'));
  await job('load', cellA, url, '--cell', 'a');
  await job('load', cellB, url, '--cell', 'b');
  await job('score', cellA, url, '--cell', 'a', '--date', SCORE_DATE);
  await job('score', cellB, url, '--cell', 'b', '--date', SCORE_DATE);
  // cell a ranks again against cell b's counts, posted after its own score
  await job('load', cellA, url, '--cell', 'a');
  await job('load', cellC, url, '--cell', 'c');
  // each export where export.js writes by default, in its data folder
  await Promise.all([
    job('export', cellA, url, '--cell', 'a'),
    job('export', cellB, url, '--cell', 'b'),
    job('export', ref, refUrl),
  ]);
  await job('export', cellC, url, '--cell', 'c');
  gathered = folder('gathered');
  merged = folder('merged');
  for (const [cell, dir] of [
    ['a', cellA],
    ['b', cellB],
    ['c', cellC],
  ] as const) {
    cpSync(pathsFor(dir).exportsDir, join(gathered, cell), { recursive: true });
    cpSync(pathsFor(dir).exportsDir, merged, { recursive: true });
  }
}, 600_000);

afterAll(async () => {
  await closeUploadQueues();
  await closeStates();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const exportOf = (dir: string): string => pathsFor(dir).exportsDir;

describe("cells' Parquet exports read as one", () => {
  it("writes each cell's tables under cell=NAME/, each driver in one cell's export only", async () => {
    for (const [cell, dir] of [
      ['a', cellA],
      ['b', cellB],
      ['c', cellC],
    ] as const) {
      const root = exportOf(dir);
      expect(readdirSync(join(root, 'apps'))).toEqual([`cell=${cell}`]);
      for (const table of ['trips', 'trip_events', 'stats_daily', 'safety_scores'])
        expect(readdirSync(join(root, table))).toEqual([`cell=${cell}`]);
    }
    const users = async (dir: string) =>
      new Set((await rowsOf(exportOf(dir), SQL('analyses/users'))).map((r) => JSON.parse(r).user_id as number));
    const [a, b, c, all] = await Promise.all([users(cellA), users(cellB), users(cellC), users(ref)]);
    expect(c.size).toBe(0);
    expect(a.size + b.size).toBe(all.size);
    expect([...a].filter((u) => b.has(u))).toEqual([]);
    expect(Math.min(a.size, b.size)).toBeGreaterThanOrEqual(all.size / 5);
  });

  it("gives every table's rows of the one warehouse, percentile included, however the exports are put together", async () => {
    const layouts: Record<string, string | string[]> = {
      'a folder holding each export': gathered,
      'one merged tree': merged,
      '--parquet repeated': [exportOf(cellA), exportOf(cellB), exportOf(cellC)],
      'two cells of three, the third without trips': [exportOf(cellA), exportOf(cellB)],
    };
    for (const table of Object.keys(BOOKKEEPING)) {
      const file = tableQuery(table);
      const want = await rowsOf(exportOf(ref), file);
      expect(want.length, table).toBeGreaterThan(0);
      for (const [layout, parquet] of Object.entries(layouts))
        expect({ layout, table, rows: await rowsOf(parquet, file) }).toEqual({ layout, table, rows: want });
    }
    // percentiles ranked over both cells, not within each
    const scores = (await rowsOf(gathered, tableQuery('safety_scores'))).map((r) => JSON.parse(r));
    expect(scores.some((s) => s.percentile !== null && s.percentile !== 100)).toBe(true);
  });

  it('gives the analyses and the models the one warehouse gives', async () => {
    const users = (await rowsOf(exportOf(ref), SQL('analyses/users'))).map((r) => JSON.parse(r));
    const runs: [string, string[]][] = [
      [SQL('analyses/users'), []],
      [SQL('analyses/param_app_matches'), [`app_id=${appId}`]],
      [SQL('analyses/param_user_matches'), [`app_id=${appId}`, `user_id=${users[0]?.user_id}`]],
      [SQL('models/marts/safety_scores'), [`as_of=${SCORE_DATE}`, 'evaluated_at=2026-11-22T03:00:00Z']],
      [SQL('models/marts/stats_daily'), ['version=1']],
      ...users.flatMap((u): [string, string[]][] =>
        ['day', 'week', 'month'].map((period) => [
          SQL('models/marts/statistics_periods'),
          [
            `app_id=${appId}`,
            `user_id=${u.user_id}`,
            `period=${period}`,
            'start_date=2026-11-01',
            'end_date=2026-11-30',
          ],
        ]),
      ),
    ];
    for (const [file, params] of runs) {
      const want = await rowsOf(exportOf(ref), file, params);
      expect(want.length, file).toBeGreaterThan(0);
      expect({ file, params, rows: await rowsOf(gathered, file, params) }).toEqual({ file, params, rows: want });
      expect({ file, params, rows: await rowsOf(merged, file, params) }).toEqual({ file, params, rows: want });
    }
  });

  it('sql.js reads a folder holding both exports, or --parquet repeated, as the one warehouse', async () => {
    const sql = (...args: string[]) =>
      runJobProcess('sql', ['--data-dir', ref, '--file', SQL('analyses/users'), '--json', ...args]);
    const [want, folderOf, repeated] = await Promise.all([
      sql('--parquet', exportOf(ref)),
      sql('--parquet', gathered),
      sql('--parquet', exportOf(cellA), '--parquet', exportOf(cellB), '--parquet', exportOf(cellC)),
    ]);
    for (const ran of [want, folderOf, repeated]) expect(ran.code, ran.stderr).toBe(0);
    const sorted = (stdout: string) =>
      (JSON.parse(stdout) as { rows: Record<string, unknown>[] }).rows
        .map((r) => JSON.stringify(r))
        .sort()
        .join('\n');
    expect(sorted(folderOf.stdout)).toBe(sorted(want.stdout));
    expect(sorted(repeated.stdout)).toBe(sorted(want.stdout));
  });

  it("refuses a cell's export given twice, a whole warehouse's beside cells', and an export over another cell's", async () => {
    const sql = (...args: string[]) =>
      runJobProcess('sql', ['--data-dir', ref, '--file', SQL('analyses/users'), ...args]);
    const [twice, whole] = await Promise.all([
      sql('--parquet', gathered, '--parquet', exportOf(cellA)),
      sql('--parquet', exportOf(ref), '--parquet', exportOf(cellB)),
    ]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(
      /^sql: failed: --parquet: cell a's export is in both .* and .*: give each cell's export once$/m,
    );
    expect(whole.code).toBe(2);
    expect(whole.stderr).toMatch(
      /^sql: failed: --parquet .*: a whole warehouse's export \(export\.js without --cell\) reads alone/m,
    );
    const over = await runJobProcess('export', ['--data-dir', cellB, '--cell', 'b', '--out', merged], {
      DATABASE_URL: url,
    });
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(
      /^export: failed: --out .* holds the export of cell a, c, and the export replaces its folder whole/m,
    );
    expect(readdirSync(join(merged, 'trips')).sort()).toEqual(['cell=a', 'cell=b', 'cell=c']);
  });

  it("a cell's purge writes its export again without the driver, in its cell's layout", async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const [driver] = (
      await c.query(
        "select a.platform_user_id, a.org_user_id from accounts a join driver_cells d using (app_id, platform_user_id) where d.cell = 'b' order by 1 limit 1",
      )
    ).rows as { platform_user_id: string; org_user_id: string }[];
    await c.end();
    const userId = String(driver?.platform_user_id);
    const state = await openState({ dataDir: cellB, databaseUrl: url });
    await state.transaction((tx) =>
      recordDeletion(tx, {
        appId,
        platformUserId: Number(userId),
        orgUserId: String(driver?.org_user_id),
        requestedAt: '2026-11-22T00:00:00.000Z',
      }),
    );
    const before = (await rowsOf(exportOf(cellB), SQL('analyses/users'))).map((r) => String(JSON.parse(r).user_id));
    expect(before).toContain(userId);
    await job('purge', cellB, url, '--cell', 'b');
    expect(existsSync(join(exportOf(cellB), 'apps.parquet'))).toBe(false);
    expect(readdirSync(join(exportOf(cellB), 'trips'))).toEqual(['cell=b']);
    const after = (await rowsOf([exportOf(cellA), exportOf(cellB)], SQL('analyses/users'))).map((r) =>
      String(JSON.parse(r).user_id),
    );
    expect(after).not.toContain(userId);
    expect(after.length).toBe(before.length - 1 + (await rowsOf(exportOf(cellA), SQL('analyses/users'))).length);
  });
});
