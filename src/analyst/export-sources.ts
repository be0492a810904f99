import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { cellsIn, isWholeExport, tableFolder } from './export-layout.js';
import { EXPORTS } from './parquet-export.js';

/**
 * What `sql.js --parquet` reads: one whole warehouse's export, or the exports of cells
 * (`export.js --cell`), each cell once, wherever they were copied (docs/decisions.md, Cells).
 */
export type ExportSources = { kind: 'whole'; root: string } | { kind: 'cells'; roots: string[]; cells: string[] };

/**
 * The exports the given folders hold. A folder is an export (a warehouse's, a cell's, or several
 * cells' copied into one tree), or holds cells' exports one level down (`DIR/a/`, `DIR/b/`).
 * A whole warehouse's export reads alone: beside cells it would count their drivers twice.
 */
export function exportSources(dirs: readonly string[]): ExportSources {
  const roots = dirs.flatMap((dir) => rootsOf(dir));
  const whole = roots.filter((r) => r.cells.length === 0);
  if (whole.length > 0) {
    if (roots.length === 1) return { kind: 'whole', root: whole[0]?.root as string };
    throw new InputError(
      `--parquet ${whole[0]?.root}: a whole warehouse's export (export.js without --cell) reads alone; only cells' exports (export.js --cell) read together`,
    );
  }
  const seen = new Map<string, string>();
  for (const { root, cells } of roots) {
    for (const cell of cells) {
      const other = seen.get(cell);
      if (other !== undefined)
        throw new InputError(
          `--parquet: cell ${cell}'s export is in both ${other} and ${root}: give each cell's export once`,
        );
      seen.set(cell, root);
      const missing = EXPORTS.filter((e) => e.partition !== null && !existsSync(tableFolder(root, e.table, cell)));
      if (missing.length > 0)
        throw new InputError(
          `--parquet ${root}: cell ${cell}'s export has no ${missing.map((m) => `${m.table}/cell=${cell}/`).join(', ')}: copy each cell's export whole`,
        );
    }
  }
  return { kind: 'cells', roots: roots.map((r) => r.root), cells: [...seen.keys()].sort() };
}

/** The exports in one --parquet folder, each with the cells it holds (none: a whole warehouse's). */
function rootsOf(dir: string): { root: string; cells: string[] }[] {
  const root = resolve(dir);
  const cells = cellsIn(root);
  if (isWholeExport(root)) {
    if (cells.length > 0)
      throw new InputError(
        `--parquet ${dir}: holds a whole warehouse's export and cells' exports (${cells.join(', ')}) in one tree; they do not read together`,
      );
    return [{ root, cells }];
  }
  if (cells.length > 0) return [{ root, cells }];
  const inside = subfolders(root)
    .map((sub) => ({ root: sub, cells: cellsIn(sub) }))
    .filter((r) => r.cells.length > 0);
  if (inside.length === 0) throw new InputError(`--parquet ${dir}: not an export folder (no apps.parquet)`);
  return inside;
}

function subfolders(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names
    .filter((n) => !n.startsWith('.'))
    .map((n) => join(dir, n))
    .filter((p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    });
}
