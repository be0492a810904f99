import { mkdirSync, statfsSync } from 'node:fs';
import { InputError } from '../errors.js';
import type { BenchSizes } from './options.js';

// Bytes per user, measured on the generator's output and the synthesizer's (README "Disk"):
// a user's day is about 2,600 points; NDJSON costs ~97 bytes a point, Parquet ~14.
const NDJSON_PER_USER_DAY = 250e3;
const PARQUET_PER_USER_DAY = 35e3;
/** Trips-only history in the warehouse and both slots: about 1.65 KB a trip (measured at 2.75 M trips), 1.45 trips a day. */
const HISTORY_PER_USER_DAY = 1.45 * 1.65e3;

/**
 * The disk a run needs at its peak: the day in both formats, a loaded copy of its points, the
 * largest history folder and a smaller one beside it, and a GiB to spare.
 */
export function diskNeeded(sizes: BenchSizes): number {
  const day = sizes.users * (NDJSON_PER_USER_DAY + 3 * PARQUET_PER_USER_DAY);
  const history = sizes.users * sizes.historyDays * HISTORY_PER_USER_DAY * 1.4;
  return day + history + 2 ** 30;
}

/** Refuses a run the work folder's file system cannot hold, before anything is written. */
export function checkDisk(workDir: string, sizes: BenchSizes): { freeBytes: number; neededBytes: number } {
  mkdirSync(workDir, { recursive: true });
  const fs = statfsSync(workDir);
  const freeBytes = fs.bavail * fs.bsize;
  const neededBytes = diskNeeded(sizes);
  if (freeBytes < neededBytes) {
    const gib = (n: number): string => (n / 2 ** 30).toFixed(1);
    throw new InputError(`not enough disk in ${workDir}: this run needs about ${gib(neededBytes)} GiB, ${gib(freeBytes)} GiB are free (choose another --work-dir or a smaller --users)`);
  }
  return { freeBytes, neededBytes };
}
