import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../fsutil.js';
import { PLAN_FILE, SLICES_DIR } from '../slice-progress.js';
import { ChangedDuringLoadError, sameIdentity, type FileIdentity } from './file-identity.js';
import type { LineIndex } from './scan-file.js';

/** One slice of a partner file: a run of whole lines, by line number and by byte range. */
export interface Slice {
  /** 0-based, in file order. */
  index: number;
  firstLine: number;
  lastLine: number;
  /** Bytes [start, end) of the partner file. */
  start: number;
  end: number;
  /** The ledger key of the slice (loaded_files): the file's SHA-256 and the range, hashed. */
  key: string;
}

/**
 * How a partner file is loaded a slice at a time, written once when its first slice is taken and
 * kept until its last is in: the file as it was (a file that changes meanwhile is planned anew),
 * its SHA-256, the moment every slice's records are judged against (as one load of the whole file
 * would judge them all), and the slices.
 */
export interface SlicePlan {
  source: string;
  key: string;
  identity: FileIdentity;
  /** ISO instant: the validating moment and loaded_at of every slice. */
  plannedAt: string;
  /** A gzip file's text, decompressed once into the plan's folder (this name there), which the slices are cut from. */
  text?: string;
  slices: Slice[];
}

const PLAN = PLAN_FILE;

/** The slices of a file whose line index is `lines`: runs of whole lines of about `sliceBytes` each, covering every byte. */
export function cutSlices(key: string, size: number, lines: LineIndex, sliceBytes: number): Slice[] {
  const out: Slice[] = [];
  let first = 0;
  let bytes = 0;
  const push = (from: number, to: number, end: number) => {
    const start = from === 0 ? 0 : (lines.start[from] as number);
    out.push({
      index: out.length,
      firstLine: out.length === 0 ? 1 : (lines.lineNo[from] as number),
      lastLine: lines.lineNo[to] as number,
      start,
      end,
      key: sliceKey(key, start, end),
    });
  };
  for (let i = 0; i < lines.count; i++) {
    const length = (lines.end[i] as number) - (lines.start[i] as number);
    if (i > first && bytes + length > sliceBytes) {
      push(first, i - 1, lines.start[i] as number);
      first = i;
      bytes = 0;
    }
    bytes += length + 1;
  }
  if (lines.count > first) push(first, lines.count - 1, size);
  return out;
}

export function sliceKey(fileKey: string, start: number, end: number): string {
  return createHash('sha256').update(`slice\0${fileKey}\0${start}\0${end}`).digest('hex');
}

/** The plan's folder under `<landing>/.slices/` (a dot name: never listed as an input). */
export const slicesDir = (landingDir: string): string => join(landingDir, SLICES_DIR);
/** Named by the file's content and its name: two byte-identical files waiting each have their own. */
export const planDir = (landingDir: string, key: string, source: string): string =>
  join(slicesDir(landingDir), `${key.slice(0, 24)}-${createHash('sha256').update(source).digest('hex').slice(0, 8)}`);

/** Writes the plan where the next run finds it: under a temporary name, fsynced, then renamed. */
export function writePlan(dir: string, plan: SlicePlan): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${PLAN}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(plan));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, PLAN));
  fsyncDir(dir);
}

/** The plan in `dir`, or null when there is none whole (a run stopped before its rename). */
export function readPlan(dir: string): SlicePlan | null {
  try {
    const plan = JSON.parse(readFileSync(join(dir, PLAN), 'utf8')) as SlicePlan;
    return Array.isArray(plan.slices) && typeof plan.key === 'string' ? plan : null;
  } catch {
    return null;
  }
}

/**
 * Writes one slice as a file of its own, as DuckDB's readers need: as many empty lines as come
 * before the slice's first line, then its bytes, so that every record keeps the line number it
 * has in the partner's file (blank lines are counted, never read as records). Read from the
 * partner's file only if it is still the file planned.
 */
export function writeSlice(plan: SlicePlan, dir: string, slice: Slice, target: string): void {
  let src: number;
  try {
    src = openSync(plan.source, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new ChangedDuringLoadError(
      `changed_during_load: ${plan.source} is gone or no longer a file (${(error as Error).message})`,
    );
  }
  try {
    const st = fstatSync(src);
    if (!sameIdentity(plan.identity, st) || st.nlink > 1)
      throw new ChangedDuringLoadError(`changed_during_load: ${plan.source} changed since its slices were planned`);
    if (plan.text) {
      // the partner's file is still the one planned: its text is the copy in the plan's folder
      const copy = openSync(join(dir, plan.text), 'r');
      closeSync(src);
      src = copy;
    }
    const out = openSync(target, 'w', 0o600);
    try {
      const padding = slice.index === 0 ? 0 : slice.firstLine - 1;
      const newlines = Buffer.alloc(Math.min(padding, CHUNK), 0x0a);
      for (let left = padding; left > 0; left -= newlines.length)
        writeSync(out, newlines, 0, Math.min(left, newlines.length));
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, slice.end - slice.start)));
      for (let at = slice.start; at < slice.end; ) {
        const n = readSync(src, buf, 0, Math.min(buf.length, slice.end - at), at);
        if (n === 0) throw new ChangedDuringLoadError(`changed_during_load: ${plan.source} is shorter than planned`);
        writeSync(out, buf, 0, n);
        at += n;
      }
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(src);
  }
}

const CHUNK = 4 << 20;
