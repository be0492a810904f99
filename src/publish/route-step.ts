import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { query, run, sqlText } from '../db/sql.js';
import type { DamageReport } from '../damage/reports.js';
import { fileIdentity } from '../serving/checksum.js';
import { upkeepRoutes } from './route-upkeep.js';
import { writeRoutes, type RouteOptions } from './routes.js';

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
 * then every missing one written (src/publish/routes.ts), and the files found intact recorded in
 * the warehouse, so the next publish reads only those written since.
 */
export async function publishRoutes(
  conn: DuckDBConnection,
  options: { publishedDir: string; routes?: RouteOptions; progress?: (message: string) => void },
  reports: DamageReport[],
): Promise<RouteStep> {
  const checked = options.routes ? await routesChecked(conn) : {};
  // the route files this job wrote before it (the load's) count as checked as they are now
  const known = { ...checked };
  for (const file of options.routes?.written ?? [])
    if (existsSync(file)) known[relative(options.publishedDir, file)] = fileIdentity(file);
  const upkeep = options.routes
    ? upkeepRoutes(options.publishedDir, options.routes.routesDir, reports, options.progress, known)
    : null;
  // before the switch, so every trip the new snapshot serves has its route file; also when the
  // version is already published (a version served before routes were written gets them now)
  const written = options.routes ? await writeRoutes(conn, options.routes) : [];
  // a file this publish wrote (fsynced, renamed into place) is intact: the next publish need not
  // read its index (megabytes of JSON for a large day) to find so
  if (upkeep) for (const file of written) upkeep.checked[relative(options.publishedDir, file)] = fileIdentity(file);
  // written only when it changed: a write is a commit (and an fsync), and a score run changes no route file
  if (upkeep && canonical(upkeep.checked) !== canonical(checked))
    await run(conn, sqlText('ops/publish/route_checks_save'), { checked: canonical(upkeep.checked) });
  return { written: written.length, read: upkeep?.read ?? 0, removed: upkeep?.removed ?? [] };
}

/** The checked route files' map as saved: by path, so that the same files compare equal whatever order they were found in. */
const canonical = (checked: Record<string, string>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(checked).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/** The route files an earlier publish found intact, with their identity then (src/publish/route-upkeep.ts). */
async function routesChecked(conn: DuckDBConnection): Promise<Record<string, string>> {
  const [row] = await query(conn, sqlText('ops/publish/route_checks'));
  try {
    const parsed: unknown = JSON.parse(String(row?.['checked'] ?? '{}'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, string>)
      : {};
  } catch {
    // unreadable: every route file is checked once more
    return {};
  }
}
