import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** Reads of 4 MiB, as the page-cache warmer reads (src/serving/warm.ts). */
const CHUNK_BYTES = 4 * 2 ** 20;

/** A file's SHA-256 (hex), read synchronously: for a served file a publish reuses from a manifest that predates checksums. */
export function sha256File(path: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buffer, 0, CHUNK_BYTES, null); n > 0; n = readSync(fd, buffer, 0, CHUNK_BYTES, null))
      hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

export interface Verification {
  /** The first file whose bytes do not have the expected SHA-256 (null: all do). */
  mismatch: string | null;
  /** Files read and bytes hashed (files verified earlier by this process, unchanged since, are not read again). */
  files: number;
  bytes: number;
  seconds: number;
}

/**
 * Files this process has verified, by path and expected checksum, with the size, modification
 * time and inode they had: a pack layer a later snapshot reuses unchanged is not read again, so a
 * publish costs the files it wrote. A file rewritten in place gets a new modification time and is
 * read again.
 */
const verified = new Map<string, string>();
/** A file's size, modification time and inode: changes whenever its bytes are written or it is replaced. */
export const fileIdentity = (path: string): string => {
  const s = statSync(path);
  return `${s.size}:${s.mtimeMs}:${s.ino}`;
};

/**
 * Checks that each file's bytes have the SHA-256 the manifest records, reading them start to end
 * through the thread pool (the event loop keeps serving the snapshot before this one). Stops at
 * the first mismatch. A missing file throws.
 */
export async function verifyFiles(files: { path: string; sha256: string }[]): Promise<Verification> {
  const started = performance.now();
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let bytes = 0;
  let read = 0;
  for (const { path, sha256 } of files) {
    const key = `${path}\0${sha256}`;
    const before = fileIdentity(path);
    if (verified.get(key) === before) continue;
    const hash = createHash('sha256');
    const handle = await open(path, 'r');
    try {
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
        bytes += bytesRead;
      }
    } finally {
      await handle.close();
    }
    read++;
    if (hash.digest('hex') !== sha256) {
      verified.delete(key);
      return { mismatch: path, files: read, bytes, seconds: (performance.now() - started) / 1000 };
    }
    verified.set(key, before);
  }
  return { mismatch: null, files: read, bytes, seconds: (performance.now() - started) / 1000 };
}
