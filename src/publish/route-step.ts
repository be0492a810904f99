import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { query, queryFile, runFile, runScript, sqlText } from '../db/sql.js';
import type { DamageReport } from '../damage/reports.js';
import { fileIdentity } from '../serving/checksum.js';
import { inTransaction, warehouseVersion } from '../warehouse/warehouse.js';
import { upkeepReportedRoutes, upkeepRoutes } from './route-upkeep.js';
import { writeRoutes, type RouteOptions } from '../warehouse/route-files.js';

export interface RouteStep {
  /** Route files written (one per version and trip date that had none). */
  written: number;
  /** Route files whose index was read to check them (those written since the last check, and reported ones). */
  read: number;
  /** Route files found damaged and removed, then written again (relative to published/). */
  removed: string[];
}

/**
 * The publish's route files (none without `routes`), before its switch: the files cut short, of an
 * older format or reported damaged are found (src/publish/route-upkeep.ts), a damaged one removed,
 * then every missing one written (src/warehouse/route-files.ts), and the files found intact recorded in
 * the warehouse, so the next publish reads only those written since.
 *
 * With `routes.incremental` (a continuous load's batch between its full upkeeps) only
 * the reported files are checked and only the versions written since the last publish get files:
 * the full upkeep looks at every route file within retention, one for each version and trip date,
 * which a load publishing every few seconds makes hundreds of thousands of.
 */
export async function publishRoutes(
  conn: DuckDBConnection,
  options: { publishedDir: string; routes?: RouteOptions; progress?: (message: string) => void },
  reports: DamageReport[],
): Promise<RouteStep> {
  const { publishedDir, routes, progress } = options;
  if (!routes) return { written: 0, read: 0, removed: [] };
  const full = !routes.incremental;
  const recorded = full ? await routesChecked(conn) : { checked: {}, saved: {} };
  // the route files this job wrote before it (the load's) count as checked as they are now
  const fresh: Record<string, string> = {};
  for (const file of routes.written ?? [])
    if (existsSync(file)) fresh[relative(publishedDir, file)] = fileIdentity(file);
  const upkeep = full
    ? upkeepRoutes(publishedDir, routes.routesDir, reports, progress, { ...recorded.checked, ...fresh })
    : upkeepReportedRoutes(publishedDir, reports, progress);
  // before the switch, so every trip the new snapshot serves has its route file; also when the
  // version is already published (a version served before routes were written gets them now)
  const version = await warehouseVersion(conn);
  const complete = Number((await queryFile(conn, 'ops/publish/routes_complete'))[0]?.['version'] ?? 0);
  const since = full || upkeep.removed.length > 0 ? 0 : complete;
  const written = await writeRoutes(conn, routes, since);
  // a file this publish wrote (fsynced, renamed into place) is intact: the next publish need not
  // read its index (megabytes of JSON for a large day) to find so
  const now: Record<string, string> = full ? { ...upkeep.checked } : { ...fresh, ...upkeep.checked };
  for (const file of written) now[relative(publishedDir, file)] = fileIdentity(file);
  // what changed since the record, only (a write is a commit, and a score run changes no route file)
  const paths = Object.keys(now).filter((path) => recorded.saved[path] !== now[path]);
  const gone = full ? Object.keys(recorded.saved).filter((path) => !(path in now)) : upkeep.removed;
  const record = paths.length > 0 || gone.length > 0 || recorded.legacy;
  // one commit for both (a continuous load's every batch has both to write)
  if (record || version !== complete)
    await inTransaction(conn, async () => {
      if (record)
        await runScript(conn, 'ops/publish/route_checks_save', {
          gone: JSON.stringify(gone),
          paths: JSON.stringify(paths),
          identities: JSON.stringify(paths.map((path) => now[path])),
        });
      if (version !== complete) await runFile(conn, 'ops/publish/routes_complete_save', { version });
    });
  return { written: written.length, read: upkeep.read, removed: upkeep.removed };
}

/**
 * The route files an earlier publish found intact, with their identity then
 * (src/publish/route-upkeep.ts): `checked` to skip reading them again, `saved` as the table holds
 * them (empty, and `legacy`, while an older warehouse's record in meta is still read).
 */
async function routesChecked(
  conn: DuckDBConnection,
): Promise<{ checked: Record<string, string>; saved: Record<string, string>; legacy?: boolean }> {
  const rows = await queryFile(conn, 'ops/publish/route_checks');
  if (rows.length > 0) {
    const saved = Object.fromEntries(rows.map((r) => [String(r['path']), String(r['identity'])]));
    return { checked: saved, saved };
  }
  const [row] = await query(conn, sqlText('ops/publish/route_checks_legacy'));
  try {
    const parsed: unknown = JSON.parse(String(row?.['checked'] ?? '{}'));
    const checked =
      parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
    return { checked, saved: {}, legacy: Object.keys(checked).length > 0 };
  } catch {
    // unreadable: every route file is checked once more
    return { checked: {}, saved: {}, legacy: true };
  }
}
