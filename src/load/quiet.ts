import { lstatSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import { inputEntries, isTakenKind } from '../landing-status.js';
import { isSdkUploadFile } from './uploads.js';

/**
 * The quiet period (DRIVING_LANDING_QUIET_MS): a partner file written in place rather than aside
 * and renamed is complete only once its writer stops, so the continuous load takes a partner file
 * only once it has not been written for that long. An SDK upload's file is written aside, fsynced
 * and renamed by the API (src/api/routes/sdk.ts): complete at once, never held back.
 */
export interface QuietSplit {
  /** Files to take now, in the order given. */
  files: string[];
  /** Partner files written within the quiet period: left in the landing area for a later batch. */
  settling: string[];
}

/**
 * When a file was last written (ms): its modification time, unless that lies ahead of its inode's
 * change time, which no writer can set (a generator's clock ahead would hold the file back for ever).
 */
export function lastWriteOf(stats: Stats): number {
  return Math.min(stats.mtimeMs, stats.ctimeMs);
}

/** Whether the file named `name` with these stats may be taken at `now`. */
export function isQuiet(name: string, stats: Stats, now: number, quietMs: number): boolean {
  return quietMs <= 0 || isSdkUploadFile(name) || now - lastWriteOf(stats) >= quietMs;
}

/** Splits listed landing files into those quiet enough to take and those still settling. */
export function holdBackSettling(files: string[], quietMs: number, now: number = Date.now()): QuietSplit {
  const out: QuietSplit = { files: [], settling: [] };
  for (const file of files) {
    let stats: Stats;
    try {
      stats = lstatSync(file);
    } catch {
      // gone since the listing: the load says so when it comes to it
      out.files.push(file);
      continue;
    }
    (isQuiet(basename(file), stats, now, quietMs) ? out.files : out.settling).push(file);
  }
  return out;
}

/**
 * Whether the landing area holds a file a batch would take now: a regular file of one name that is
 * quiet, or whose name the load must make valid first. A link, a FIFO, or a partner file still
 * settling makes no batch (the watch looks again at its next poll, so a settled file waits at most
 * a poll beyond its quiet period).
 */
export function landingReady(landingDir: string, quietMs: number, now: number = Date.now()): boolean {
  for (const entry of inputEntries(landingDir)) {
    if (entry.stats === null || !isTakenKind(entry.stats)) continue;
    if (entry.badName || isQuiet(entry.name, entry.stats, now, quietMs)) return true;
  }
  return false;
}
