import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where an export's files go (docs/decisions.md, Cells). Without a cell: `apps.parquet` and
 * `<table>/app_id=…/<month>=…/` at the top, as a warehouse has always been exported. A cell's
 * export puts every table one Hive level down, `<table>/cell=NAME/…` (`apps/cell=NAME/apps.parquet`),
 * so the exports of several cells copied into one folder never overwrite each other, and the cell
 * is a column to whoever reads the files with hive partitioning.
 */
export const CELL_KEY = 'cell';

/** The folder holding a partitioned table's files in an export. */
export const tableFolder = (root: string, table: string, cell: string | null): string =>
  cell === null ? join(root, table) : join(root, table, `${CELL_KEY}=${cell}`);

/** The apps table's one file in an export. */
export const appsFile = (root: string, cell: string | null): string =>
  cell === null ? join(root, 'apps.parquet') : join(root, 'apps', `${CELL_KEY}=${cell}`, 'apps.parquet');

/** The cells whose export a folder holds (one, or several copied into one tree), by their apps file. */
export function cellsIn(root: string): string[] {
  const apps = join(root, 'apps');
  if (!existsSync(apps)) return [];
  let names: string[];
  try {
    names = readdirSync(apps);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(`${CELL_KEY}=`) && existsSync(join(apps, n, 'apps.parquet')))
    .map((n) => n.slice(CELL_KEY.length + 1))
    .sort();
}

/** Whether a folder holds a whole warehouse's export (written without a cell). */
export const isWholeExport = (root: string): boolean => existsSync(appsFile(root, null));
