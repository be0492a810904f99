import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';
import { pathsFor, jobSettings } from '../config.js';
import { appsOf } from './data-dir.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { exportParquet, type ExportResult } from '../export/export.js';
import { silent, type Progress } from '../progress.js';

export interface ExportOptions {
  dataDir: string;
  out?: string;
  progress?: Progress;
}

/** The export job: the warehouse as Parquet for analysts (default: <data-dir>/exports). */
export async function runExport(options: ExportOptions): Promise<ExportResult & { seconds: number }> {
  const started = Date.now();
  const paths = pathsFor(options.dataDir);
  const out = resolve(options.out ?? paths.exportsDir);
  const progress = options.progress ?? silent;
  const apps = await appsOf(options.dataDir);
  checkOut(out);
  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: jobSettings().memoryLimit });
  try {
    progress(`export: writing Parquet to ${out}`);
    const result = await exportParquet(wh, out);
    return { ...result, seconds: (Date.now() - started) / 1000 };
  } finally {
    wh.close();
  }
}

/**
 * The export replaces its target folder whole, so the target must be a folder (or not exist yet):
 * a file there is a mistyped flag, not something to overwrite.
 */
function checkOut(out: string): void {
  let stats;
  try {
    stats = statSync(out);
  } catch {
    return;
  }
  if (!stats.isDirectory()) throw new InputError(`--out ${out} is a file, not a folder: give a folder (it is replaced whole)`);
}
