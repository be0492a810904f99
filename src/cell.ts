import { join } from 'node:path';
import { setting } from './settings.js';
import { InputError } from './errors.js';

/** A cell's name: lower-case letters, digits and dashes, as it appears in folder names and metrics. */
export const CELL_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** A bad --cell (or DRIVING_CELL): bad input, exit 2. */
export class CellSettingError extends InputError {}

/** Whether `name` may name a cell; the reason when not. */
export function cellNameProblem(name: string): string | null {
  return CELL_NAME.test(name)
    ? null
    : `a cell's name is 1 to 32 lower-case letters, digits or dashes, starting with a letter or digit; got ${JSON.stringify(name)}`;
}

/**
 * The cell this machine's jobs are (--cell, env DRIVING_CELL), or null: a data folder without one
 * is the only cell, as before cells. A cell needs the shared state store in PostgreSQL, where the
 * drivers' cells and the uploads waiting for each cell are.
 */
export function currentCell(): string | null {
  const name = setting('DRIVING_CELL');
  if (name === null || name === '') return null;
  const problem = cellNameProblem(name);
  if (problem) throw new CellSettingError(`--cell: ${problem}`);
  if (!setting('DATABASE_URL'))
    throw new CellSettingError(
      `--cell ${name}: the cells of a deployment share one PostgreSQL state store: set DATABASE_URL (or --database-url)`,
    );
  return name;
}

/** Where an API machine keeps its copy of a cell it follows (serve.js --follow NAME=SOURCE). */
export const cellFolder = (dataDir: string, name: string): string => join(dataDir, 'cells', name);
