import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../src/apps/store.js';
import { CellDirectory } from '../src/cells/directory.js';
import { generateTrips } from '../src/generate/generate.js';
import { PassportStore } from '../src/passport/store.js';
import { openState } from '../src/state/open.js';
import { addDays } from '../src/time.js';
import { record, type BenchContext } from './context.js';
import { cellsHistoryDays } from './options.js';
import { synthesizeHistory, type SynthUser } from './synthesize.js';

/** The cells the stage runs, in the order a driver is first given one. */
export const CELLS = ['a', 'b'] as const;
export type CellName = (typeof CELLS)[number];

/** Two cells and one warehouse holding the same drivers, history and day, sharing one PostgreSQL. */
export interface CellsFleet {
  url: string;
  appId: string;
  apiKey: string;
  timeZone: string;
  /** Each cell's data folder, and the one warehouse's. */
  dirs: Record<CellName | 'one', string>;
  /** Each cell's drivers, as the service gave them their cell when their accounts were made. */
  drivers: Record<CellName, SynthUser[]>;
  /** Day D of every driver of both cells as NDJSON partner files (not yet dropped anywhere). */
  day: { dir: string; files: string[]; bytes: number; trips: number };
  historyDays: number;
}

const TIME_ZONE = 'Europe/Berlin';

/**
 * The stage's deployment on this host: cells a and b registered in the shared state store, an app,
 * 2N accounts made through the passport (so each driver gets its cell by the service's own rule:
 * the least-loaded accepting cell), the history of each cell's drivers synthesized into its
 * warehouse and every driver's into the one warehouse, and day D of every driver generated as
 * partner files. The one warehouse has no cell: its jobs take every record and rank over all.
 */
export async function buildCells(ctx: BenchContext, root: string, url: string, n: number): Promise<CellsFleet> {
  const dirs = { a: join(root, 'cell-a'), b: join(root, 'cell-b'), one: join(root, 'one') };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  for (const cell of CELLS)
    await new CellDirectory(await openState({ dataDir: dirs[cell], databaseUrl: url })).register(cell);
  const app = await new AppStore({ dataDir: dirs.a, databaseUrl: url }).add({
    name: 'Bench Cells',
    timeZone: TIME_ZONE,
  });

  const t0 = performance.now();
  const orgUserIds = Array.from({ length: 2 * n }, (_, i) => `driver-${String(i + 1).padStart(7, '0')}`);
  const accounts = await PassportStore.ensureAccountsIn({ dataDir: dirs.a, databaseUrl: url }, app.appId, orgUserIds);
  const users = orgUserIds.map((orgUserId) => ({ orgUserId, platformUserId: accounts.get(orgUserId) as number }));
  const state = await openState({ dataDir: dirs.a, databaseUrl: url });
  const cellOf = await new CellDirectory(state).cellsOf(
    app.appId,
    users.map((u) => u.platformUserId),
  );
  const drivers: Record<CellName, SynthUser[]> = { a: [], b: [] };
  for (const u of users) drivers[cellOf.get(u.platformUserId) as CellName]?.push(u);
  if (drivers.a.length + drivers.b.length !== users.length)
    throw new Error('a driver was given no cell, or one the stage does not run');
  record(ctx, {
    stage: 'setup',
    metric: `cells: ${users.length.toLocaleString('en-US')} accounts, each given its cell (a ${drivers.a.length}, b ${drivers.b.length})`,
    value: (performance.now() - t0) / 1000,
    unit: 's',
  });

  const historyDays = cellsHistoryDays(ctx.options.sizes);
  for (const [dir, who] of [
    [dirs.a, drivers.a],
    [dirs.b, drivers.b],
    [dirs.one, users],
  ] as const) {
    const t1 = performance.now();
    const synth = await synthesizeHistory({
      dataDir: dir,
      users: who,
      endDate: addDays(ctx.day, -1),
      days: historyDays,
      seed: ctx.options.seed,
      progress: ctx.progress,
    });
    record(ctx, {
      stage: 'setup',
      metric: `cells: ${historyDays} day(s) of history for ${who.length.toLocaleString('en-US')} drivers (${synth.trips.toLocaleString('en-US')} trips) in ${dir.slice(root.length + 1)}`,
      value: (performance.now() - t1) / 1000,
      unit: 's',
    });
  }

  const day = await partnerDay(ctx, join(root, 'day'), app.appId, users);
  return { url, appId: app.appId, apiKey: app.apiKey, timeZone: TIME_ZONE, dirs, drivers, day, historyDays };
}

/** Day D of every driver, `usersPerFile` drivers a file, in driver order: each file holds both cells' drivers. */
async function partnerDay(
  ctx: BenchContext,
  dir: string,
  appId: string,
  users: SynthUser[],
): Promise<CellsFleet['day']> {
  mkdirSync(dir, { recursive: true });
  const per = ctx.options.sizes.usersPerFile;
  const out: CellsFleet['day'] = { dir, files: [], bytes: 0, trips: 0 };
  const t0 = performance.now();
  for (let i = 0; i * per < users.length; i++) {
    const scratch = join(ctx.options.workDir, '.chunk-cells');
    const summary = await generateTrips({
      outDir: scratch,
      appId,
      timeZone: TIME_ZONE,
      users: users.slice(i * per, (i + 1) * per),
      days: 1,
      endDate: ctx.day,
      seed: ctx.options.seed + i,
      format: 'ndjson',
      badRecords: false,
    });
    const file = join(dir, `partner-${ctx.day}-part-${String(i + 1).padStart(4, '0')}.ndjson`);
    renameSync(summary.files[0] as string, file);
    rmSync(scratch, { recursive: true, force: true });
    out.files.push(file);
    out.bytes += statSync(file).size;
    out.trips += summary.trips;
  }
  record(ctx, {
    stage: 'setup',
    metric: `cells: day ${ctx.day} of ${users.length.toLocaleString('en-US')} drivers as ${out.files.length} NDJSON partner files (${out.trips.toLocaleString('en-US')} trips, ${(out.bytes / 2 ** 20).toFixed(0)} MiB)`,
    value: (performance.now() - t0) / 1000,
    unit: 's',
  });
  return out;
}
