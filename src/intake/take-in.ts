import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../fsutil.js';
import type { UploadQueue } from './upload-queue.js';

/** Uploads read from PostgreSQL at once: each is at most the SDK's body limit. */
const PAGE = 100;
/** Pages a take-in reads at most: a steady stream never holds the load's batch back; the rest is the next batch's. */
const MAX_PAGES = 50;

export interface TakenIn {
  /** Uploads written into the landing area (or found there already, from a take-in cut short) and released. */
  uploads: number;
  bytes: number;
}

/**
 * Takes the uploads waiting in PostgreSQL into the landing area (docs/decisions.md, "Uploads across
 * machines"), oldest first: each is written aside, fsynced and renamed under the name the API gave
 * it, the folder is fsynced, and only then are they released in PostgreSQL. Killed anywhere, an
 * upload is never lost (it stays waiting until its file is durable) and never loaded twice: a
 * take-in cut short before the release finds the file still there (same name: kept as it is) or,
 * once loaded and archived, writes it again, and the load's upload ledger leaves those bytes out as
 * already loaded (src/load/uploads.ts). The caller holds the warehouse, so no other load lists the
 * area meanwhile. A cell's load takes its drivers' uploads, and those of no cell (split if need be:
 * src/cells/split.ts).
 */
export async function takeInUploads(
  queue: UploadQueue,
  landingDir: string,
  cell: string | null = null,
): Promise<TakenIn> {
  const out: TakenIn = { uploads: 0, bytes: 0 };
  mkdirSync(landingDir, { recursive: true });
  for (let page = 0; page < MAX_PAGES; page++) {
    const waiting = await queue.waiting(PAGE, cell);
    if (waiting.length === 0) break;
    for (const upload of waiting) {
      writeUpload(landingDir, upload.name, upload.content);
      out.bytes += upload.content.length;
    }
    fsyncDir(landingDir);
    // durable in the landing area: released, so no machine's copy of it waits any more
    await queue.release(waiting.map((u) => u.seq));
    out.uploads += waiting.length;
  }
  return out;
}

/** Writes an upload's landing file unless a take-in cut short left it in place already (the same bytes under the same name). */
function writeUpload(landingDir: string, name: string, content: Buffer): void {
  // the name is the API's own (sdk-<time>-<uuid>.ndjson), never a path
  if (name.includes('/') || name.startsWith('.')) throw new Error(`an upload named ${JSON.stringify(name)} refused`);
  const path = join(landingDir, name);
  if (lstatSync(path, { throwIfNoEntry: false })?.isFile()) return;
  const tmp = join(landingDir, `.${name}.tmp`);
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (let at = 0; at < content.length; ) at += writeSync(fd, content, at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
