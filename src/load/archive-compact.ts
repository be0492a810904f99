import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile } from '../db/sql.js';
import { setting } from '../settings.js';
import { dayMembers, MERGED } from './archive-members.js';
import { recoverDay, switchMerged, writeMerged, type MergeInput } from './archive-merge.js';
import { takenLately } from './retake.js';

export interface CompactResult {
  /** Merged files written, archived files they replaced, and the bytes read and written. */
  merges: number;
  filesReplaced: number;
  bytesIn: number;
  bytesOut: number;
}

export interface CompactOptions {
  /** Merge a day only when it has this many loose files (or small merged files); default DRIVING_ARCHIVE_MERGE_FILES. */
  minFiles?: number;
  /** Every day merged as far as it goes, in as many merges as it takes (load.js); else one bounded merge at most (the continuous load's idle turn). */
  everything?: boolean;
  /** Only the day folders before this day (YYYY-MM-DD). */
  before?: string;
  /** Bytes read by one merge, at least two files (default 64 MiB a turn; MERGED_TARGET_BYTES with `everything`). */
  budgetBytes?: number;
}

/** A merged file this large is no longer merged again (a merge may end a little above it). */
export const MERGED_TARGET_BYTES = 256 * 2 ** 20;
const TURN_BUDGET_BYTES = 64 * 2 ** 20;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** Archived NDJSON files as moved there (plain text: a gzipped or Parquet file stays as it came). */
const LOOSE = /\.(ndjson|jsonl|json)$/i;

/** Per open warehouse: each day folder's modification time when a turn last found nothing to do in it. */
const quietDays = new WeakMap<DuckDBConnection, Map<string, number>>();

/**
 * Merges the landing archive's day files into gzip files of one member per file
 * (docs/decisions.md, "Landing archive: merged by day"; src/load/archive-merge.ts). A day is merged
 * when it has `minFiles` loose archived files the purge's index knows (none still watched for
 * writes: src/load/retake.ts), or as many merged files under MERGED_TARGET_BYTES: so a day's files
 * are at most about `minFiles` loose ones and a few merged ones. The continuous load runs one
 * bounded merge a turn while idle; load.js merges every day before today as far as it goes.
 */
export async function compactArchive(
  conn: DuckDBConnection,
  landingDir: string,
  now: Date,
  options: CompactOptions = {},
): Promise<CompactResult> {
  const result: CompactResult = { merges: 0, filesReplaced: 0, bytesIn: 0, bytesOut: 0 };
  const root = join(landingDir, 'loaded');
  if (!existsSync(root)) return result;
  const minFiles = options.minFiles ?? setting('DRIVING_ARCHIVE_MERGE_FILES');
  // a merged file stays about MERGED_TARGET_BYTES at most: a purge rewrites a merged file that
  // holds a driver whole, so its size bounds what one driver's purge copies of a day
  const budget = options.budgetBytes ?? (options.everything ? MERGED_TARGET_BYTES : TURN_BUDGET_BYTES);
  const quiet = quietDays.get(conn) ?? new Map<string, number>();
  quietDays.set(conn, quiet);
  const taken = takenLately(landingDir, now.getTime());
  const days = readdirSync(root).filter((d) => DAY.test(d) && (options.before === undefined || d < options.before));
  for (const day of days.sort()) {
    const dayDir = join(root, day);
    const mtime = statSync(dayDir).mtimeMs;
    if (!options.everything && quiet.get(day) === mtime) continue;
    await recoverDay(conn, dayDir, day, now);
    for (;;) {
      const inputs = await pick(conn, dayDir, day, taken, minFiles, budget, options.everything === true);
      if (inputs === null) break;
      const merged = await writeMerged(dayDir, inputs.inputs, inputs.replaces);
      await switchMerged(conn, dayDir, day, merged.name, now);
      result.merges++;
      result.filesReplaced += inputs.replaces.length;
      result.bytesIn += merged.bytesIn;
      result.bytesOut += merged.bytesOut;
      // bounded work a turn: the next turn goes on
      if (!options.everything) return result;
    }
    quiet.set(day, statSync(dayDir).mtimeMs);
  }
  return result;
}

/** What one merge of the day takes: loose files first (oldest name first), else small merged files; null: nothing due. */
async function pick(
  conn: DuckDBConnection,
  dayDir: string,
  day: string,
  taken: Set<string>,
  minFiles: number,
  budget: number,
  everything: boolean,
): Promise<{ inputs: MergeInput[]; replaces: string[] } | null> {
  const indexed = new Map(
    (await queryFile(conn, 'ops/compact/indexed_names', { day })).map((r) => [
      String(r['name']),
      String(r['file_key']),
    ]),
  );
  const loose: { name: string; path: string; size: number }[] = [];
  for (const name of readdirSync(dayDir).sort()) {
    if (name.startsWith('.') || !LOOSE.test(name) || !indexed.has(name)) continue;
    const path = join(dayDir, name);
    if (taken.has(path)) continue;
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isFile() && st.nlink === 1) loose.push({ name, path, size: st.size });
  }
  const members = await dayMembers(conn, day);
  const small = [...members.entries()]
    .filter(([name]) => MERGED.test(name) && existsSync(join(dayDir, name)))
    .map(([name, list]) => ({ name, list, size: statSync(join(dayDir, name)).size }))
    .filter((m) => m.size < MERGED_TARGET_BYTES)
    .sort((a, b) => Number(MERGED.exec(a.name)?.[1]) - Number(MERGED.exec(b.name)?.[1]));
  // the nightly merge puts a day's loose files and small merged files together; the idle turn
  // takes loose files when enough wait, else small merged files when enough are there
  const takeSmall = everything ? small.length + loose.length >= 2 : loose.length < minFiles && small.length >= minFiles;
  const takeLoose = everything ? loose.length >= 1 : loose.length >= minFiles;
  if (!takeSmall && !takeLoose) return null;
  const inputs: MergeInput[] = [];
  const replaces: string[] = [];
  let bytes = 0;
  // at least two files a merge, whatever the budget: a merge of one merged file would gain nothing
  const room = () => replaces.length < 2 || bytes < budget;
  if (takeSmall) {
    for (const m of small) {
      if (!room()) break;
      for (const member of m.list) inputs.push({ kind: 'copy', member, mergedPath: join(dayDir, m.name) });
      replaces.push(m.name);
      bytes += m.size;
    }
  }
  if (takeLoose) {
    for (const f of loose) {
      if (!room()) break;
      inputs.push({ kind: 'file', name: f.name, path: f.path, indexedKey: indexed.get(f.name) ?? null });
      replaces.push(f.name);
      bytes += f.size;
    }
  }
  return { inputs, replaces };
}

/**
 * compactArchive as a step beside the load's real work (the continuous load's idle turn, load.js
 * after its publish): a merge that fails (a full disk) leaves what it had (src/load/archive-merge.ts)
 * and is said, never fails the load; the next turn tries again.
 */
export async function compactArchiveStep(
  conn: DuckDBConnection,
  landingDir: string,
  now: Date,
  options: CompactOptions & { progress: (line: string) => void },
): Promise<CompactResult | null> {
  try {
    const result = await compactArchive(conn, landingDir, now, options);
    if (result.merges > 0)
      options.progress(
        `load: landing archive: ${result.filesReplaced} file(s) merged into ${result.merges} (${(result.bytesIn / 2 ** 20).toFixed(1)} -> ${(result.bytesOut / 2 ** 20).toFixed(1)} MiB)`,
      );
    return result;
  } catch (error) {
    options.progress(
      `load: landing archive: a merge failed (${String((error as Error)?.message ?? error).split('\n')[0]}); the next run tries again`,
    );
    return null;
  }
}
