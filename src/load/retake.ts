import { existsSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileIdentity } from './file-identity.js';
import { isSdkUploadFile } from './uploads.js';

/**
 * Partner files loaded lately, as the load verified them, so that one its writer went on writing
 * after it was taken (a descriptor kept open, appending to the archived file) is seen and taken
 * again whole: moved back into the landing area, where the records already loaded come back as
 * unchanged re-sends (no event, docs/decisions.md, "Landing: a file written after it was taken").
 * SDK upload files are written whole by the API and never watched.
 */
export interface TakenFile {
  /** Where the file is archived: `landing/loaded/<day>/<name>`. */
  archived: string;
  /** Its name in the landing area. */
  name: string;
  identity: FileIdentity;
  /** When it was taken (ms). */
  takenAt: number;
}

export interface Retaken {
  archived: string;
  /** Where it is in the landing area again. */
  back: string;
  bytesLoaded: number;
  bytesNow: number;
}

/** How long a taken file is watched for writes after it was taken. */
export const RETAKE_WINDOW_MS = 24 * 3600_000;

/** The record of the files taken lately: a dot name, which no load takes. */
const takenFile = (landingDir: string) => join(landingDir, '.taken.json');

function readTaken(landingDir: string): TakenFile[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(takenFile(landingDir), 'utf8'));
    return Array.isArray(parsed) ? (parsed as TakenFile[]) : [];
  } catch {
    return [];
  }
}

function writeTaken(landingDir: string, taken: TakenFile[]): void {
  const file = takenFile(landingDir);
  if (taken.length === 0) {
    rmSync(file, { force: true });
    return;
  }
  writeFileSync(`${file}.tmp`, JSON.stringify(taken), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Adds the partner files this load archived to the record; the ones past the window leave it. */
export function recordTaken(landingDir: string, files: TakenFile[], now: number = Date.now()): void {
  const partner = files.filter((f) => !isSdkUploadFile(f.name));
  const known = readTaken(landingDir);
  const kept = known.filter((f) => now - f.takenAt < RETAKE_WINDOW_MS);
  if (partner.length === 0 && kept.length === known.length) return;
  writeTaken(landingDir, [...kept, ...partner]);
}

/** Whether a recorded file was written since it was taken (the continuous load then runs a batch for it). */
export function takenChanged(landingDir: string, now: number = Date.now()): boolean {
  return readTaken(landingDir).some((entry) => now - entry.takenAt < RETAKE_WINDOW_MS && writtenSince(entry) === true);
}

/** true: the same file, written since; false: unchanged; null: gone, or another file now. */
function writtenSince(entry: TakenFile): boolean | null {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(entry.archived);
  } catch {
    return null;
  }
  const { identity } = entry;
  if (!st.isFile() || st.dev !== identity.dev || st.ino !== identity.ino) return null;
  return st.size !== identity.size || st.mtimeMs !== identity.mtimeMs;
}

/**
 * Moves each recorded file that was written since it was taken (the same inode, another size or
 * modification time) back into the landing area, under its name if free. A file gone from the
 * archive, or replaced by another inode (a purge writes a new file and renames it), is forgotten.
 */
export function retakeChanged(landingDir: string, now: number = Date.now()): Retaken[] {
  const taken = readTaken(landingDir);
  if (taken.length === 0) return [];
  const kept: TakenFile[] = [];
  const retaken: Retaken[] = [];
  for (const entry of taken) {
    if (now - entry.takenAt >= RETAKE_WINDOW_MS) continue;
    const written = writtenSince(entry);
    if (written === null) continue;
    if (!written) {
      kept.push(entry);
      continue;
    }
    const bytesNow = lstatSync(entry.archived, { throwIfNoEntry: false })?.size ?? entry.identity.size;
    let back = join(landingDir, entry.name);
    if (existsSync(back)) back = join(landingDir, `retaken-${now}-${entry.name}`);
    try {
      renameSync(entry.archived, back);
    } catch {
      kept.push(entry);
      continue;
    }
    retaken.push({ archived: entry.archived, back, bytesLoaded: entry.identity.size, bytesNow });
  }
  if (retaken.length > 0 || kept.length !== taken.length) writeTaken(landingDir, kept);
  return retaken;
}

/** The archived paths of the partner files still watched for writes: a merge of the archive leaves them be. */
export function takenLately(landingDir: string, now: number = Date.now()): Set<string> {
  return new Set(
    readTaken(landingDir)
      .filter((e) => now - e.takenAt < RETAKE_WINDOW_MS)
      .map((e) => e.archived),
  );
}
