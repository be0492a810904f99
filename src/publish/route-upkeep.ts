import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  RouteFileDamagedError,
  rewriteRouteFileWithout,
  routeFileIsCurrent,
  verifyRouteFile,
} from '../route/route-file.js';
import type { DamageReport } from '../damage/reports.js';
import { fileIdentity } from '../serving/checksum.js';

export interface RouteUpkeep {
  /** Route files found damaged and removed (relative to published/): the publish writes them again from the raw points. */
  removed: string[];
  /** Route files of an older format (no checksums) rewritten in the current one. */
  upgraded: number;
  /** Every route file found intact and current, by path relative to published/, with its identity (size, mtime, inode) then. */
  checked: Record<string, string>;
  /** Route files whose index (or, reported, every block) was read. */
  read: number;
}

const ROUTE_NAME = /^v\d+\.route$/;
/** A route file's path relative to published/, as a damage report names it. */
const ROUTE_PATH = /^routes\/trip_date=\d{4}-\d{2}-\d{2}\/v\d+\.route$/;

/**
 * Before the publish writes the route files that are missing (src/warehouse/route-files.ts): every route
 * file's index is read from its tail and checked (its CRC-32; a file cut short has no magic at its
 * end), every block of a file a reader reported damaged (src/damage/reports.ts) is checked too, and
 * a damaged file is removed, so that writeRoutes writes it again from the warehouse's trips and raw
 * points. Never rewritten from its own bytes: that would seal the damage with fresh checksums. A
 * file of an older format (DDSROUT1, DDSROUT2: no checksums) is rewritten in the current one.
 * Reading every block of every file at every publish would cost the whole route store (tens of GB
 * at the full size); the index and the reports cost a read per file. A file `checked` by an
 * earlier publish with the same size, modification time and inode (none written since) is not read
 * again: parsing every index (megabytes of JSON per file for a large day) at every publish
 * would cost the publish the whole history's trips. A file damaged without a write (bit rot) is
 * found by the reader that reads it, which reports it: a reported file is always checked in full.
 */
export function upkeepRoutes(
  publishedDir: string,
  routesDir: string,
  reports: DamageReport[],
  progress?: (m: string) => void,
  checked: Record<string, string> = {},
): RouteUpkeep {
  const out: RouteUpkeep = { removed: [], upgraded: 0, checked: {}, read: 0 };
  if (!existsSync(routesDir)) return out;
  const reported = new Set(reports.map((r) => r.file));
  for (const day of readdirSync(routesDir)
    .filter((d) => d.startsWith('trip_date='))
    .sort()) {
    const dir = join(routesDir, day);
    for (const name of readdirSync(dir)
      .filter((n) => ROUTE_NAME.test(n))
      .sort())
      upkeepFile(publishedDir, join(dir, name), reported, checked, out, progress);
  }
  return out;
}

/**
 * The upkeep of the route files readers reported damaged only (a continuous load's batch, between
 * the full upkeeps): each is checked in full and removed when damaged, or was removed already;
 * the other files are left as the last full upkeep found them.
 */
export function upkeepReportedRoutes(
  publishedDir: string,
  reports: DamageReport[],
  progress?: (m: string) => void,
): RouteUpkeep {
  const out: RouteUpkeep = { removed: [], upgraded: 0, checked: {}, read: 0 };
  const reported = new Set(reports.map((r) => r.file).filter((f) => ROUTE_PATH.test(f)));
  for (const rel of [...reported].sort()) {
    const file = join(publishedDir, rel);
    if (existsSync(file)) upkeepFile(publishedDir, file, reported, {}, out, progress);
    else out.removed.push(rel);
  }
  return out;
}

/** One route file: skipped when `checked` with its identity now, else its index (all of it, reported) checked. */
function upkeepFile(
  publishedDir: string,
  file: string,
  reported: Set<string>,
  checked: Record<string, string>,
  out: RouteUpkeep,
  progress?: (m: string) => void,
): void {
  const rel = relative(publishedDir, file);
  try {
    const before = fileIdentity(file);
    if (!reported.has(rel) && checked[rel] === before) {
      out.checked[rel] = before;
      return;
    }
    out.read++;
    if (reported.has(rel)) verifyRouteFile(file);
    if (!routeFileIsCurrent(file)) {
      rewriteRouteFileWithout(file, () => false, true);
      out.upgraded++;
    }
    out.checked[rel] = fileIdentity(file);
  } catch (error) {
    if (!(error instanceof RouteFileDamagedError)) throw error;
    rmSync(file, { force: true });
    out.removed.push(rel);
    progress?.(
      `publish: ${rel} is damaged (${error.message.slice(error.message.indexOf(': ') + 2)}): removed, written again from the warehouse`,
    );
  }
}
