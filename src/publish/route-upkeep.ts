import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RouteFileDamagedError, rewriteRouteFileWithout, routeFileIsCurrent, verifyRouteFile } from '../route/route-file.js';
import type { DamageReport } from '../damage/reports.js';

export interface RouteUpkeep {
  /** Route files found damaged and removed (relative to published/): the publish writes them again from the raw points. */
  removed: string[];
  /** Route files of an older format (no checksums) rewritten in the current one. */
  upgraded: number;
}

const ROUTE_NAME = /^v\d+\.route$/;

/**
 * Before the publish writes the route files that are missing (src/publish/routes.ts): every route
 * file's index is read from its tail and checked (its CRC-32; a file cut short has no magic at its
 * end), every block of a file a reader reported damaged (src/damage/reports.ts) is checked too, and
 * a damaged file is removed, so that writeRoutes writes it again from the warehouse's trips and raw
 * points. Never rewritten from its own bytes: that would seal the damage with fresh checksums. A
 * file of an older format (DDSROUT1, DDSROUT2: no checksums) is rewritten in the current one.
 * Reading every block of every file at every publish would cost the whole route store (31 to 64 GB
 * at 100,000 drivers); the index and the reports cost a read per file.
 */
export function upkeepRoutes(publishedDir: string, routesDir: string, reports: DamageReport[], progress?: (m: string) => void): RouteUpkeep {
  const out: RouteUpkeep = { removed: [], upgraded: 0 };
  if (!existsSync(routesDir)) return out;
  const reported = new Set(reports.map((r) => r.file));
  for (const day of readdirSync(routesDir).filter((d) => d.startsWith('trip_date=')).sort()) {
    const dir = join(routesDir, day);
    for (const name of readdirSync(dir).filter((n) => ROUTE_NAME.test(n)).sort()) {
      const file = join(dir, name);
      const rel = relative(publishedDir, file);
      try {
        if (reported.has(rel)) verifyRouteFile(file);
        if (!routeFileIsCurrent(file)) {
          rewriteRouteFileWithout(file, () => false, true);
          out.upgraded++;
        }
      } catch (error) {
        if (!(error instanceof RouteFileDamagedError)) throw error;
        rmSync(file, { force: true });
        out.removed.push(rel);
        progress?.(`publish: ${rel} is damaged (${error.message.slice(error.message.indexOf(': ') + 2)}): removed, written again from the warehouse`);
      }
    }
  }
  return out;
}
