import { closeSync, existsSync, openSync, readdirSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Overwrites `bytes` at `position` in `file`, in place (same inode, as a disk or a stray write would). */
export function overwrite(file: string, position: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, position);
  } finally {
    closeSync(fd);
  }
}

/** Every file under `dir`, recursively (none skipped). */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
