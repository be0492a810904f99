import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * Runs `fn` holding an exclusive lock file (O_EXCL). A lock left by a dead process is taken over.
 * Used for the small JSON stores that the operator's CLI edits.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T> | T, waitMs = 10_000): Promise<T> {
  mkdirSync(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (lockHolderIsDead(lockPath)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lockPath} is held by another process`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

function lockHolderIsDead(lockPath: string): boolean {
  try {
    const pid = Number(readFileSync(lockPath, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return true;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ESRCH' || code === 'ENOENT';
  }
}
