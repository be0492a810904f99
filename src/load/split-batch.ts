import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fsyncDir } from '../fsutil.js';
import { isBatchFile, timePrefix } from './uploads.js';

/**
 * A batch of SDK uploads whose change failed a check goes back into the landing area line by line:
 * each record a file of its own, still an SDK upload's (named as a batch, so no batching takes it
 * again, and sorting where the batch did, in the batch's order), and the batch file goes. The next
 * load takes them one at a time, so the record whose change fails the check fails alone and the
 * others, of every app, load: a batch mixes the uploads of many drivers and apps, and one of them
 * must not set the rest aside. Returns how many files the batch became; 0 for a file that is not
 * a batch, or holds one record (it fails alone as it is).
 *
 * Crash-safe: the pieces are written under temporary names (which the next load's batch recovery
 * removes), fsynced and renamed into place before the batch file is removed; a batch split again
 * after a crash gives the same pieces under new names, and a piece already loaded is known by its
 * bytes and skipped.
 */
export function splitBatch(file: string): number {
  const name = basename(file);
  if (!isBatchFile(name)) return 0;
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  if (lines.length <= 1) return 0;
  const dir = dirname(file);
  const id = randomUUID();
  const pieces = lines.map((line, i) => ({
    line,
    name: `${timePrefix(name)}-batch-${String(i + 1).padStart(6, '0')}-${id}.ndjson`,
  }));
  for (const piece of pieces) {
    const fd = openSync(join(dir, `.${piece.name}.tmp`), 'w', 0o600);
    try {
      writeSync(fd, `${piece.line}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  for (const piece of pieces) renameSync(join(dir, `.${piece.name}.tmp`), join(dir, piece.name));
  fsyncDir(dir);
  rmSync(file, { force: true });
  fsyncDir(dir);
  return pieces.length;
}
