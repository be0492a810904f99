import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CellDirectory } from '../src/cells/directory.js';
import { postAndRank } from '../src/cells/rank.js';
import { splitLanding } from '../src/cells/split.js';
import { pathsFor } from '../src/data-folder.js';
import { jobSettings } from '../src/job-settings.js';
import { closeUploadQueues, sharedUploadQueue } from '../src/intake/upload-queue.js';
import { closeStates, openState } from '../src/state/open.js';
import { openWarehouse } from '../src/warehouse/warehouse.js';
import { AppStore } from '../src/apps/store.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { CELLS, buildCells, type CellName, type CellsFleet } from './cells-setup.js';
import { cellsApi } from './cells-api.js';

/**
 * Cells (docs/scaling.md): two cells of N drivers each beside one warehouse of the same 2N, all on
 * one PostgreSQL of the bench's own (test/helpers/postgres.ts), each job a real process run one
 * after the other (each cell is a machine of its own: on this host they would share two cores).
 * Day D of every driver arrives as partner files holding both cells' drivers: dropped on the one
 * warehouse and on cell a, where the split sends cell b's records through the shared intake. The
 * figures: the split, each day's load, each nightly score, the percentile step (a cell posting its
 * counts and ranking against the other's), and the API's p50 / p99 through a machine following
 * both cells against one serving the one warehouse.
 */
export async function benchCells(ctx: BenchContext): Promise<void> {
  const n = ctx.options.sizes.cellsDrivers;
  const root = join(ctx.options.workDir, 'cells');
  const pg = await startPostgres();
  // the bench's own calls (the history synthesizer's app lookup) read the same shared store
  const saved = process.env['DATABASE_URL'];
  try {
    const url = await pg.database();
    process.env['DATABASE_URL'] = url;
    ctx.progress(`bench: cells: two cells of ${n} drivers beside one warehouse of ${2 * n}`);
    const fleet = await buildCells(ctx, root, url, n);
    await loadDay(ctx, fleet);
    await scoreNight(ctx, fleet);
    await rankCost(ctx, fleet);
    await cellsApi(ctx, fleet, root);
  } finally {
    await closeUploadQueues();
    await closeStates();
    await pg.stop();
    if (saved === undefined) delete process.env['DATABASE_URL'];
    else process.env['DATABASE_URL'] = saved;
    if (!ctx.options.keep) rmSync(root, { recursive: true, force: true });
  }
}

/** A job of the fleet as a real process (`--cell` for a cell's), its `--json` answer and wall time. */
async function job(
  ctx: BenchContext,
  fleet: CellsFleet,
  name: 'load' | 'score',
  where: CellName | 'one',
  args: string[] = [],
): Promise<{ json: Record<string, unknown>; seconds: number }> {
  const cell = where === 'one' ? [] : ['--cell', where];
  const run = await runNodeChild(
    `${name} ${where}`,
    jobScript(ctx, name),
    ['--data-dir', fleet.dirs[where], ...cell, ...args, '--json'],
    { ...childOptions(ctx, false), env: { DATABASE_URL: fleet.url } },
  );
  ctx.children.push(run);
  return { json: jobJson(run), seconds: run.wallSeconds };
}

const tripsOf = (json: Record<string, unknown>): number =>
  (json['totals'] as { tripsLoaded: number } | undefined)?.tripsLoaded ?? 0;

/**
 * The day's partner files dropped on the one warehouse and on cell a. The one warehouse loads them
 * first (without a cell its load would take every cell's forwarded records too); then the split of
 * cell a's landing area, timed in this process around src/cells/split.ts as the load runs it;
 * then cell a's load of its own records and cell b's of the records forwarded to it.
 */
async function loadDay(ctx: BenchContext, fleet: CellsFleet): Promise<void> {
  const landing = { a: pathsFor(fleet.dirs.a).landingDir, one: pathsFor(fleet.dirs.one).landingDir };
  for (const dir of Object.values(landing)) mkdirSync(dir, { recursive: true });
  for (const file of fleet.day.files) {
    copyFileSync(file, join(landing.a, basename(file)));
    renameSync(file, join(landing.one, basename(file)));
  }
  const mib = (fleet.day.bytes / 2 ** 20).toFixed(0);
  const drivers = (2 * ctx.options.sizes.cellsDrivers).toLocaleString('en-US');

  const one = await job(ctx, fleet, 'load', 'one');
  const trips = tripsOf(one.json);
  record(ctx, {
    stage: 'cells',
    metric: `load of day D, one warehouse of ${drivers} drivers (load.js; ${fleet.day.files.length} partner files, ${mib} MiB, ${trips.toLocaleString('en-US')} trips)`,
    value: one.seconds,
    unit: 's',
    doc: true,
  });

  const t0 = performance.now();
  const split = await splitLanding(
    landing.a,
    'a',
    new CellDirectory(await openState({ dataDir: fleet.dirs.a, databaseUrl: fleet.url })),
    await sharedUploadQueue(fleet.url),
    { quietMs: 0, now: new Date() },
  );
  const splitSeconds = (performance.now() - t0) / 1000;
  record(ctx, {
    stage: 'cells',
    metric: `split of the day's partner files dropped on cell a (src/cells/split.ts: ${mib} MiB read twice, ${split.forwarded.toLocaleString('en-US')} records of cell b forwarded to PostgreSQL in ${split.pieces} pieces)`,
    value: splitSeconds,
    unit: 's',
    doc: true,
  });

  const loaded: Record<CellName, number> = { a: 0, b: 0 };
  for (const cell of CELLS) {
    const run = await job(ctx, fleet, 'load', cell);
    loaded[cell] = tripsOf(run.json);
    const source = cell === 'a' ? 'its own records of the partner files, split' : 'the records forwarded to it';
    record(ctx, {
      stage: 'cells',
      metric: `load of day D, cell ${cell} of ${fleet.drivers[cell].length.toLocaleString('en-US')} drivers (load.js --cell ${cell}: ${source}; ${loaded[cell].toLocaleString('en-US')} trips)`,
      value: run.seconds,
      unit: 's',
      doc: true,
    });
  }
  if (loaded.a + loaded.b !== trips)
    throw new Error(`the cells loaded ${loaded.a} + ${loaded.b} trips of the day, the one warehouse ${trips}`);
}

/** The nightly score of day D: the one warehouse, then each cell (whose run posts its counts and ranks). */
async function scoreNight(ctx: BenchContext, fleet: CellsFleet): Promise<void> {
  for (const where of ['one', ...CELLS] as const) {
    const run = await job(ctx, fleet, 'score', where, ['--date', ctx.scoreDate]);
    const users = (run.json['runs'] as { users: number }[]).reduce((sum, r) => sum + r.users, 0);
    const publish = (run.json['publish'] as { seconds: number }).seconds;
    const who =
      where === 'one' ? 'one warehouse' : `cell ${where} (score.js --cell ${where}, its percentile step included)`;
    record(ctx, {
      stage: 'cells',
      metric: `nightly score, ${who}: ${users.toLocaleString('en-US')} drivers × ${fleet.historyDays} days + day D (of which publish ${publish.toFixed(2)} s)`,
      value: run.seconds,
      unit: 's',
      doc: true,
    });
  }
}

/**
 * The percentile step alone, timed in this process around src/cells/rank.ts postAndRank as a job
 * runs it on the cell's warehouse: cell a posts its counts again and ranks against cell b's,
 * posted after a's score (the catch-up every cell makes once the others have scored), then cell b
 * posts and ranks against a's.
 */
async function rankCost(ctx: BenchContext, fleet: CellsFleet): Promise<void> {
  const apps = await new AppStore({ dataDir: fleet.dirs.a, databaseUrl: fleet.url }).list();
  for (const cell of CELLS) {
    const wh = await openWarehouse(pathsFor(fleet.dirs[cell]).warehouseFile, apps, {
      memoryLimit: jobSettings().memoryLimit,
    });
    try {
      const state = await openState({ dataDir: fleet.dirs[cell], databaseUrl: fleet.url });
      const t0 = performance.now();
      const result = await postAndRank(wh, state, cell, [{ appId: fleet.appId, date: ctx.scoreDate }]);
      record(ctx, {
        stage: 'cells',
        metric: `percentile step, cell ${cell}: its counts posted to PostgreSQL and its drivers ranked against every cell's (${result.ranked} app-date(s), ${result.changed.toLocaleString('en-US')} percentile(s) changed)`,
        value: (performance.now() - t0) / 1000,
        unit: 's',
        doc: true,
      });
    } finally {
      wh.close();
    }
  }
}
