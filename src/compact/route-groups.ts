/** A route file of a trip date: its version (from its name) and its size. */
export interface RouteFileSize {
  version: number;
  bytes: number;
}

/** A date's small files are merged once this many of them can go into one. */
export const MIN_FILES_TO_MERGE = 4;

/** Files below this many bytes count as this many: a run of small files of uneven sizes still merges. */
export const SMALL_BYTES = 4 * 1024 * 1024;

/**
 * Which of a date's route files (oldest first) to merge into one, or none: always a run of files
 * next to each other in version order, ending with the newest (the API serves a trip from the
 * newest file that lists it, so a merge that skipped a file between two it took would serve a copy
 * older than the skipped one's).
 *
 * A date that is still written (`settled` false: today and yesterday, UTC) is merged size-tiered,
 * as an LSM tree is: from the newest file back, an older file joins while it is at most twice the
 * bytes of the files taken so far (or of SMALL_BYTES, if more), and the run is merged once it has MIN_FILES_TO_MERGE files. So
 * a byte is rewritten about once per doubling of its date, not once per batch, and a date keeps a
 * few files per doubling of its size. A settled date (older) is merged into one file.
 */
export function routeFilesToMerge(files: readonly RouteFileSize[], settled: boolean): number[] {
  if (files.length < 2) return [];
  if (settled) return files.map((f) => f.version);
  const newest = files[files.length - 1] as RouteFileSize;
  const run = [newest.version];
  let bytes = newest.bytes;
  for (let i = files.length - 2; i >= 0; i--) {
    const file = files[i] as RouteFileSize;
    if (file.bytes > 2 * Math.max(bytes, SMALL_BYTES)) break;
    run.unshift(file.version);
    bytes += file.bytes;
  }
  return run.length >= MIN_FILES_TO_MERGE ? run : [];
}
