import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** What a file was when its load began: the same inode, size and modification time, or another file. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * A file that changed (was appended to, rewritten, replaced or turned into a link) while it was
 * loaded: nothing of it is kept, it stays in the landing area, and the next run takes it again.
 */
export class ChangedDuringLoadError extends Error {
  readonly reason = 'changed_during_load';
}

/** The file's identity now, by lstat: a link is never followed. */
export function identityOf(path: string): FileIdentity {
  const st = lstatSync(path);
  if (!st.isFile()) throw new ChangedDuringLoadError(`changed_during_load: ${path} is no longer a regular file`);
  if (st.nlink > 1) throw new ChangedDuringLoadError(`changed_during_load: ${path} has become a hard link`);
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

export function sameIdentity(a: FileIdentity, b: { dev: number; ino: number; size: number; mtimeMs: number }): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Throws ChangedDuringLoadError unless the file is still exactly what the load began with. */
export function assertUnchanged(path: string, before: FileIdentity): void {
  let now: FileIdentity;
  try {
    now = identityOf(path);
  } catch (error) {
    if (error instanceof ChangedDuringLoadError) throw error;
    throw new ChangedDuringLoadError(`changed_during_load: ${path} is gone`);
  }
  if (!sameIdentity(before, now)) {
    throw new ChangedDuringLoadError(
      `changed_during_load: ${path} changed while it was loaded (size ${before.size} -> ${now.size} bytes); it stays in the landing area for the next run`,
    );
  }
}

/** Removes the raw-points Parquet files a failed load of the file with this key wrote. */
export function removePointFiles(pointsDir: string, key: string): void {
  const prefix = `f${key.slice(0, 16)}_`;
  let partitions: string[];
  try {
    partitions = readdirSync(pointsDir);
  } catch {
    return;
  }
  for (const partition of partitions) {
    let names: string[];
    try {
      names = readdirSync(join(pointsDir, partition));
    } catch {
      continue;
    }
    for (const name of names) if (name.startsWith(prefix)) rmSync(join(pointsDir, partition, name), { force: true });
  }
}
