import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/**
 * Writes a file so that readers see either the old or the new content, never a torn one:
 * write a sibling temp file, fsync it, rename over the target, fsync the directory.
 */
export function writeFileAtomic(path: string, content: string | Uint8Array, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = temporaryBeside(path);
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      writeFileSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    moveIntoPlace(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/** A temporary name in the target's folder (a rename is atomic within one file system only). */
export function temporaryBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
}

/** The second half of writeFileAtomic: a temp file, fsynced, renamed over the target, and the folder fsynced. */
export function moveIntoPlace(tmp: string, path: string): void {
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}

/** fsync of a file something else wrote (DuckDB's COPY), before moveIntoPlace. */
export function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
