import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { addDays } from '../time.js';

/**
 * Drops raw-point partitions older than the retention: points are needed only to derive trip
 * metrics, which the warehouse keeps. Partition folders are `trip_date=YYYY-MM-DD`.
 */
export function prunePoints(pointsDir: string, retentionDays: number, today: string): string[] {
  if (!existsSync(pointsDir)) return [];
  const oldestKept = addDays(today, -retentionDays);
  const removed: string[] = [];
  for (const name of readdirSync(pointsDir)) {
    const match = /^trip_date=(\d{4}-\d{2}-\d{2})$/.exec(name);
    if (match && (match[1] as string) < oldestKept) {
      rmSync(join(pointsDir, name), { recursive: true, force: true });
      removed.push(match[1] as string);
    }
  }
  return removed.sort();
}

/** Drops landing-area archives (`loaded/<day>`, `failed/<day>`) older than the retention. */
export function pruneLandingArchive(landingDir: string, retentionDays: number, today: string): string[] {
  const oldestKept = addDays(today, -retentionDays);
  const removed: string[] = [];
  for (const outcome of ['loaded', 'failed']) {
    const dir = join(landingDir, outcome);
    if (!existsSync(dir)) continue;
    for (const day of readdirSync(dir)) {
      if (/^\d{4}-\d{2}-\d{2}$/.test(day) && day < oldestKept) {
        rmSync(join(dir, day), { recursive: true, force: true });
        removed.push(`${outcome}/${day}`);
      }
    }
  }
  return removed.sort();
}
