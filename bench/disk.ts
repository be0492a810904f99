import { mkdirSync, statfsSync } from 'node:fs';
import { InputError } from '../src/errors.js';
import { cellsHistoryDays, type BenchSizes, type Stage } from './options.js';

// Bytes per user, measured on the generator's output and the synthesizer's (README "Disk"):
// a user's day is about 2,600 points; NDJSON costs ~97 bytes a point, Parquet ~14.
const NDJSON_PER_USER_DAY = 250e3;
const PARQUET_PER_USER_DAY = 35e3;
/** Synthesized history: 1.45 trips per user and day. */
const TRIPS_PER_USER_DAY = 1.45;
/** The warehouse and both slots: about 1.5 KB a trip, as the full-size runs write them (docs/benchmarks.md). */
const STORE_PER_TRIP = 1.5e3;
/**
 * The serving pack: about 1.26 KB a trip, as the full-size runs write it (docs/benchmarks.md),
 * twice while a load's publish writes a new trips file beside the served one.
 */
const PACK_PER_TRIP = 2 * 1.26e3;

/**
 * The disk a run needs at its peak, with a GiB more. The load stage's NDJSON day (with the raw
 * points its load writes) is deleted before the later stages build their history, so the peak is
 * the larger of the two phases: that, or the Parquet day (load and growth; with a load's raw
 * points) beside the history's warehouse, slots and serving pack with 10 % to spare (growth, score
 * and api). A run that keeps its work folder (`keep`) holds everything at once.
 */
export function diskNeeded(
  sizes: BenchSizes,
  stages: readonly Stage[] = ['load', 'growth', 'score', 'api'],
  keep = false,
): number {
  // the slices stage: the NDJSON day, its copy as one partner file (archived when loaded), and its
  // raw points; the archive-compact stage takes its batches from the generated NDJSON day
  const ndjsonPhase = Math.max(
    stages.includes('load') || stages.includes('archive-compact')
      ? sizes.users * (NDJSON_PER_USER_DAY + PARQUET_PER_USER_DAY)
      : 0,
    stages.includes('slices') ? sizes.users * (2 * NDJSON_PER_USER_DAY + PARQUET_PER_USER_DAY) : 0,
  );
  const parquetDay = stages.includes('load') || stages.includes('growth') ? sizes.users * 3 * PARQUET_PER_USER_DAY : 0;
  // the cluster stages serve the api stage's snapshot
  const servesApi = stages.some((s) => ['api', 'workers', 'restart', 'tokens'].includes(s));
  const needsHistory =
    servesApi || stages.includes('growth') || stages.includes('score') || stages.includes('fairshare');
  const historyTrips = needsHistory
    ? Math.max(sizes.users * sizes.historyDays * TRIPS_PER_USER_DAY, servesApi ? sizes.apiTrips : 0)
    : 0;
  const historyPhase = parquetDay + historyTrips * (STORE_PER_TRIP + PACK_PER_TRIP) * 1.1;
  const cellsPhase = stages.includes('cells') ? cellsNeeded(sizes) : 0;
  return (keep ? ndjsonPhase + historyPhase + cellsPhase : Math.max(ndjsonPhase, historyPhase, cellsPhase)) + 2 ** 30;
}

/**
 * The cells stage: the NDJSON day of both cells' drivers twice (dropped on cell a, and on the one
 * warehouse) with the half forwarded through PostgreSQL, its raw points twice, and the history
 * twice (the cells and the one warehouse) with an API machine's copy of both cells.
 */
function cellsNeeded(sizes: BenchSizes): number {
  const drivers = 2 * sizes.cellsDrivers;
  const trips = drivers * cellsHistoryDays(sizes) * TRIPS_PER_USER_DAY;
  return (
    drivers * (2.5 * NDJSON_PER_USER_DAY + 2 * PARQUET_PER_USER_DAY) + 3 * trips * (STORE_PER_TRIP + PACK_PER_TRIP)
  );
}

/** Refuses a run the work folder's file system cannot hold, before anything is written. */
export function checkDisk(
  workDir: string,
  sizes: BenchSizes,
  stages?: readonly Stage[],
  keep = false,
): { freeBytes: number; neededBytes: number } {
  mkdirSync(workDir, { recursive: true });
  const fs = statfsSync(workDir);
  const freeBytes = fs.bavail * fs.bsize;
  const neededBytes = diskNeeded(sizes, stages, keep);
  if (freeBytes < neededBytes) {
    const gib = (n: number): string => (n / 2 ** 30).toFixed(1);
    throw new InputError(
      `not enough disk in ${workDir}: this run needs about ${gib(neededBytes)} GiB, ${gib(freeBytes)} GiB are free (choose another --work-dir or a smaller --users)`,
    );
  }
  return { freeBytes, neededBytes };
}
