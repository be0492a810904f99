import { existsSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InputError } from '../errors.js';
import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { appsOf } from './data-dir.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { exportParquet, type ExportResult } from '../analyst/parquet-export.js';
import { cellsIn } from '../analyst/export-layout.js';
import { currentCell } from '../cell.js';
import { deletedAccounts } from '../purge/requests.js';
import { silent, type Progress } from '../progress.js';

export interface ExportOptions {
  dataDir: string;
  out?: string;
  progress?: Progress;
}

export interface ExportRun extends ExportResult {
  seconds: number;
  /** Whether the next purge of a deleted account removes this export (only the default, `<data-dir>/exports`, is). */
  purgedWithAccounts: boolean;
  /** What that means for the operator, said after the summary. */
  note: string;
}

/** The export job: the warehouse as Parquet for analysts (default: <data-dir>/exports). */
export async function runExport(options: ExportOptions): Promise<ExportRun> {
  const started = Date.now();
  const paths = pathsFor(options.dataDir);
  const out = resolve(options.out ?? paths.exportsDir);
  const progress = options.progress ?? silent;
  const apps = await appsOf(options.dataDir);
  const cell = currentCell();
  checkOut(out);
  checkPlace(out, paths.dataDir, paths.exportsDir);
  checkOthers(out, cell);
  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: jobSettings().memoryLimit });
  try {
    progress(`export: writing Parquet${cell === null ? '' : ` of cell ${cell}`} to ${out}`);
    // a DELETE answered before the purge ran: the user is left out already (docs/decisions.md, Deletion)
    const result = await exportParquet(wh, out, await deletedAccounts({ dataDir: paths.dataDir }), cell);
    return { ...result, seconds: (Date.now() - started) / 1000, ...reach(out, paths.dataDir, paths.exportsDir) };
  } finally {
    wh.close();
  }
}

/**
 * An export holds every user's trips: the operator must know whether a purge will reach it. The
 * default folder inside the data folder is removed by the next purge (src/purge/purge.ts); any
 * other folder is a copy the operator keeps and erases.
 */
export function reach(out: string, dataDir: string, exportsDir: string): { purgedWithAccounts: boolean; note: string } {
  if (resolve(out) === resolve(exportsDir)) {
    return {
      purgedWithAccounts: true,
      note: 'inside the data folder: the next load or score that purges a deleted account writes this export again without them',
    };
  }
  const inside = !relative(resolve(dataDir), resolve(out)).startsWith('..');
  return {
    purgedWithAccounts: false,
    note: `${inside ? 'inside the data folder but not its exports/ folder' : 'outside the data folder'}: the operator's copy, which purges never reach; when an account is deleted (user.deleted events), remove or rewrite this export yourself`,
  };
}

/**
 * Inside the data folder an export goes to `exports/` only: that is the folder the purge of a
 * deleted account writes again (src/purge/purge.ts); an export anywhere else in the data folder
 * would keep the account's trips with nothing to erase them. And a target holding the data folder
 * would replace it whole.
 */
export function checkPlace(out: string, dataDir: string, exportsDir: string): void {
  const [target, data, exports] = [out, dataDir, exportsDir].map(real) as [string, string, string];
  if (target === exports) return;
  if (within(data, target)) {
    throw new InputError(
      `--out ${out} is inside the data folder ${dataDir}: an export inside the data folder goes to its exports/ folder (the default), which the purge of a deleted account writes again; anywhere else it must be outside the data folder (the operator's copy, which purges never reach)`,
    );
  }
  if (within(target, data))
    throw new InputError(
      `--out ${out} holds the data folder ${dataDir}, and the export replaces its folder whole: give a folder outside the data folder`,
    );
}

/** Whether `path` is `folder` or inside it. */
function within(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The path with its links resolved as far as it exists: a folder reached through a link is still the same folder. */
function real(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(real(parent), basename(absolute));
}

/**
 * The export replaces its target folder whole: a folder where cells' exports were gathered would
 * lose the other cells' files. Each cell writes a folder of its own; they are copied together
 * afterwards (docs/jobs.md, sql.js).
 */
function checkOthers(out: string, cell: string | null): void {
  const others = cellsIn(out).filter((c) => c !== cell);
  if (others.length === 0) return;
  throw new InputError(
    `--out ${out} holds the export of cell ${others.join(', ')}, and the export replaces its folder whole: give each cell's export a folder of its own, then copy them together`,
  );
}

/**
 * The export replaces its target folder whole, so the target must be a folder (or not exist yet):
 * a file there is a mistyped flag, not something to overwrite.
 */
function checkOut(out: string): void {
  let stats: Stats;
  try {
    stats = statSync(out);
  } catch {
    return;
  }
  if (!stats.isDirectory())
    throw new InputError(`--out ${out} is a file, not a folder: give a folder (it is replaced whole)`);
}
