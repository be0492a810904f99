import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../data-folder.js';
import type { JobEnd } from './cli.js';
import type { LoadResult } from './load.js';
import type { ScoreResult } from './score.js';
import type { ExportResult } from '../analyst/parquet-export.js';
import type { PurgeResult } from '../purge/purge.js';
import type { PurgeJobResult } from './purge.js';
import { writeJobMetrics } from '../metrics/textfile.js';
import { sqliteFileOf } from '../state/db.js';
import { setting, type Env } from '../settings.js';

/**
 * The metrics folder: the flag, else DRIVING_METRICS_DIR, else `<data-dir>/metrics`; null when
 * that default's data folder holds no apps (a mistyped --data-dir gets nothing written into it).
 */
export function metricsDirOf(flag: string | undefined, dataDir: string, env?: Env): string | null {
  const given = flag ?? setting('DRIVING_METRICS_DIR', env);
  if (given !== null) return given;
  const paths = pathsFor(dataDir);
  // apps.json of an earlier release, the state store, or (PostgreSQL state) the warehouse
  return [paths.appsFile, sqliteFileOf(dataDir), paths.warehouseFile].some((f) => existsSync(f))
    ? join(dataDir, 'metrics')
    : null;
}

type Records = {
  records?: Record<string, number>;
  rejected?: Record<string, number>;
  files?: Record<string, number>;
  filesFailed?: Record<string, number>;
};

/** For runJob: writes the run's metrics file once the job has ended (src/metrics/textfile.ts). */
export function jobMetrics<T>(
  job: string,
  dir: string | null,
  recordsOf: (result: T) => Records = () => ({}),
): JobEnd<T> {
  return async (run) => {
    if (dir !== null)
      await writeJobMetrics(dir, job, { ...run, ...(run.result !== undefined ? recordsOf(run.result) : {}) });
  };
}

const purged = (p: PurgeResult) => ({ purged: p.trips });

export const loadRecords = (r: LoadResult): Records => ({
  records: { loaded: r.totals.tripsLoaded, ...purged(r.purged) },
  rejected: r.totals.rejected,
  files: {
    loaded: r.totals.files - r.totals.filesSkipped - r.totals.filesFailed,
    skipped: r.totals.filesSkipped,
    failed: r.totals.filesFailed,
    // the landing area's intake besides loading (src/jobs/load.ts, LandingIntake)
    retaken: r.intake.retaken,
    settling: r.intake.settling,
    vanished: r.intake.vanished,
    renamed: r.intake.renamed,
  },
  filesFailed: r.totals.filesFailedBy,
});
export const scoreRecords = (r: ScoreResult): Records => ({
  records: { scored: r.runs.reduce((n, run) => n + run.users, 0), ...purged(r.purged) },
});
export const purgeRecords = (r: PurgeJobResult): Records => ({ records: purged(r.purged) });
export const exportRecords = (r: ExportResult): Records => ({
  records: { exported: Object.values(r.tables).reduce((n, rows) => n + rows, 0) },
});
