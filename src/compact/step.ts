import type { DuckDBConnection } from '@duckdb/node-api';
import type { Paths } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { readManifest } from '../publish/manifest.js';
import { removeUnnamedPackFiles } from '../publish/retire.js';
import { addDays, todayIn } from '../time.js';
import { compactPoints, type PointsCompaction } from './points.js';
import { compactRoutes, type RouteCompaction } from './routes.js';
import { servesManifestAlone } from './served.js';

export interface CompactStep {
  /** False when the API still served an earlier snapshot (or nothing was published): nothing was done. */
  ran: boolean;
  /** Serving files no manifest names, removed. */
  packFilesRemoved: number;
  routes: RouteCompaction;
  points: PointsCompaction;
}

const NOTHING: RouteCompaction = { merges: 0, removed: 0, bytesRead: 0, bytesWritten: 0, pending: false };

type CompactPaths = Pick<Paths, 'publishedDir' | 'manifestFile' | 'routesDir' | 'pointsDir'>;

/**
 * The background upkeep of the published files, off the request path: once the API serves the
 * current manifest alone, the serving files no manifest names are removed (a publish keeps the
 * files of the snapshot it replaced, which the API may still be serving), and each trip date's
 * route files and raw-points files are merged into few (src/compact/routes.ts, points.ts), at most
 * `maxMerges` merges a call (route files first).
 * Run between the continuous load's batches, while it is idle, by the nightly load before its
 * publish, and after a re-derive's.
 */
export async function compactStep(
  conn: DuckDBConnection,
  paths: CompactPaths,
  options: { now: Date; retentionDays: number; maxMerges: number; waitMs?: number; progress?: (m: string) => void },
): Promise<CompactStep> {
  const manifest = readManifest(paths.manifestFile);
  if (!manifest || !(await servesManifestAlone(conn, paths.publishedDir, manifest, options.waitMs ?? 0)))
    return { ran: false, packFilesRemoved: 0, routes: NOTHING, points: NOTHING };
  const packFilesRemoved = removeUnnamedPackFiles(paths.publishedDir, manifest);
  const today = todayIn('UTC', options.now);
  const routes = await compactRoutes(conn, paths.routesDir, {
    servedVersion: manifest.version,
    oldest: addDays(today, -options.retentionDays),
    // a trip of yesterday may still arrive (an SDK queues uploads offline): older dates are settled
    settledBefore: addDays(today, -1),
    maxMerges: options.maxMerges,
    ...(options.progress ? { progress: options.progress } : {}),
  });
  const points = await compactPoints(conn, paths.pointsDir, {
    oldest: addDays(today, -options.retentionDays),
    settledBefore: addDays(today, -1),
    maxMerges: Math.max(0, options.maxMerges - routes.merges),
    ...(options.progress ? { progress: options.progress } : {}),
  });
  return { ran: true, packFilesRemoved, routes, points };
}

/**
 * compactStep as a job runs it beside its own work: `maxMerges` merges at most, and a failure (a
 * full disk) is reported, never the job's: the files stay as they were, and the next call tries again.
 */
export async function compactQuietly(
  conn: DuckDBConnection,
  paths: CompactPaths,
  options: { now: Date; retentionDays: number; maxMerges: number; waitMs?: number; progress: (m: string) => void },
): Promise<CompactStep | null> {
  try {
    const step = await compactStep(conn, paths, options);
    const r = step.routes;
    const p = step.points;
    if (r.merges > 0 || p.merges > 0 || step.packFilesRemoved > 0)
      options.progress(
        `compact: ${r.merges} route merge(s) (${r.removed} file(s) folded in, ${(r.bytesRead / 1e6).toFixed(1)} -> ${(r.bytesWritten / 1e6).toFixed(1)} MB)` +
          `, ${p.merges} points merge(s) (${p.removed} file(s), ${(p.bytesRead / 1e6).toFixed(1)} -> ${(p.bytesWritten / 1e6).toFixed(1)} MB)` +
          `, ${step.packFilesRemoved} serving file(s) no manifest names removed${r.pending || p.pending ? '; more to merge' : ''}`,
      );
    return step;
  } catch (error) {
    options.progress(
      `compact: not done this time: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
    return null;
  }
}

/** One step of a resting continuous load (a merge at most); whether more is left, or the API had not switched yet. */
export async function compactIdle(
  conn: DuckDBConnection,
  paths: CompactPaths,
  progress: (m: string) => void,
): Promise<boolean> {
  const retentionDays = jobSettings().pointsRetentionDays;
  const step = await compactQuietly(conn, paths, { now: new Date(), retentionDays, maxMerges: 1, progress });
  return step !== null && (!step.ran || step.routes.pending || step.points.pending);
}
