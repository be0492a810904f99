import { pathsFor, type Paths } from '../data-folder.js';
import { jobSettings, type JobSettings } from '../job-settings.js';
import { heartbeat, type Heartbeat } from '../heartbeat.js';
import { silent, type Progress } from '../progress.js';
import { openWarehouse, refreshApps, type Warehouse } from '../warehouse/warehouse.js';
import { appsOf } from './data-dir.js';
import type { LoadOptions } from './load-types.js';

/** What every step of one load run shares (src/jobs/load.ts). */
export interface LoadRun {
  options: LoadOptions;
  now: Date;
  /** The UTC day the run archives its landing files under. */
  day: string;
  paths: Paths;
  settings: JobSettings;
  wh: Warehouse;
  /** The caller holds the warehouse across runs (the continuous load): not closed here. */
  held: boolean;
  /** The landing area, not files given with --input. */
  fromLanding: boolean;
  beat: Heartbeat;
  progress: Progress;
}

/**
 * The run's first step: the warehouse opened (or the held one's apps refreshed). Every step is
 * named as it starts and again every 5 s while it lasts: opening a large warehouse (its WAL
 * replayed, the schema and macros installed), batching many uploads and a first file on a cold
 * cache each took seconds without a word.
 */
export async function openLoad(options: LoadOptions): Promise<LoadRun> {
  const now = options.now ?? new Date();
  const beat = heartbeat(options.progress ?? silent, { timer: options.progress !== undefined });
  const progress = beat.progress;
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const run = {
    options,
    now,
    day: now.toISOString().slice(0, 10),
    paths,
    settings,
    held: options.warehouse !== undefined,
    fromLanding: options.inputs === undefined || options.inputs.length === 0,
    beat,
    progress,
  };
  try {
    const apps = await appsOf(options.dataDir);
    if (options.warehouse) {
      await refreshApps(options.warehouse, apps);
      return { ...run, wh: options.warehouse };
    }
    const opening = `load: opening the warehouse ${paths.warehouseFile} (schema, macros, ${apps.length} app(s))`;
    progress(opening);
    beat.doing(opening);
    const openStarted = Date.now();
    const wh = await openWarehouse(paths.warehouseFile, apps, {
      memoryLimit: settings.memoryLimit,
      lockWaitMs: options.lockWaitMs,
      threads: options.threads,
    });
    progress(`load: warehouse open in ${((Date.now() - openStarted) / 1000).toFixed(1)} s`);
    return { ...run, wh };
  } catch (error) {
    beat.stop();
    throw error;
  }
}
