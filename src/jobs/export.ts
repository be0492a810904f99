import { resolve } from 'node:path';
import { pathsFor, jobSettings } from '../config.js';
import { AppStore } from '../apps/store.js';
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
  const wh = await openWarehouse(paths.warehouseFile, new AppStore(paths.appsFile).list(), { memoryLimit: jobSettings().memoryLimit });
  try {
    progress(`export: writing Parquet to ${out}`);
    const result = await exportParquet(wh, out);
    return { ...result, seconds: (Date.now() - started) / 1000 };
  } finally {
    wh.close();
  }
}
