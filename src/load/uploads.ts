import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, lstatSync, readFileSync, renameSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fsyncDir } from '../fsutil.js';

/**
 * The name the API gives the landing file of one SDK upload (src/api/routes/sdk.ts): the upload's
 * time, so that files sort in arrival order, and a random id.
 */
export function uploadFileName(at: Date): string {
  return `sdk-${stamp(at)}-${randomUUID()}.ndjson`;
}

/** Exactly the API's upload names: a partner's file is never taken for one. */
const UPLOAD = /^sdk-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.ndjson$/;

/** Where the upload files of a batch wait while the batch file is made (a `.` name: never loaded). */
const PENDING = '.uploads-batched';

export interface UploadBatches {
  /** Upload files put into batch files. */
  uploads: number;
  /** The batch files made, each now an ordinary landing file. */
  files: string[];
  bytes: number;
  /** Why batching stopped early, if it did (the uploads not batched load as files of their own). */
  error?: string;
}

/**
 * Puts the SDK upload files waiting in the landing area together into batch files of up to
 * `maxBytes` each, oldest first, before the load lists the area. Every upload is a file of its own
 * (the API answers 202 once its file is renamed into place), and the load pays its per-file work
 * (a transaction, a version, a points file and a route file) for each: 619 one-trip files took
 * 101 s against 2 s for the same records in one file. A batch file holds its uploads' lines in
 * order, so a later upload of a trip still wins over an earlier one, as between files.
 *
 * Crash-safe in three renames: the batch file is written and fsynced under a `.tmp` name; its
 * uploads are moved into `.uploads-batched/<batch>/`; the batch file is renamed into place; the
 * folder is removed. A run that died in between is finished first (`recoverBatches`), so no
 * upload is lost or loaded twice. `maxBytes` 0 leaves every upload a file of its own.
 */
export function batchUploads(landingDir: string, maxBytes: number): UploadBatches {
  const out: UploadBatches = { uploads: 0, files: [], bytes: 0 };
  if (!existsSync(landingDir)) return out;
  recoverBatches(landingDir);
  if (maxBytes <= 0) return out;
  for (const group of groups(landingDir, maxBytes)) {
    if (group.length < 2) continue;
    const first = group[0] as { name: string; bytes: number };
    const name = `${first.name.slice(0, 'sdk-'.length + 24)}-batch-${group.length}-${randomUUID()}.ndjson`;
    const tmp = join(landingDir, `.${name}.tmp`);
    try {
      writeBatch(landingDir, group, tmp);
    } catch (error) {
      // a full disk, say: the uploads stay files of their own and load as such
      rmSync(tmp, { force: true });
      out.error = error instanceof Error ? error.message : String(error);
      break;
    }
    const pending = join(landingDir, PENDING, name);
    mkdirSync(pending, { recursive: true });
    fsyncDir(join(landingDir, PENDING));
    for (const { name: upload } of group) renameSync(join(landingDir, upload), join(pending, upload));
    fsyncDir(pending);
    fsyncDir(landingDir);
    renameSync(tmp, join(landingDir, name));
    fsyncDir(landingDir);
    rmSync(pending, { recursive: true, force: true });
    out.uploads += group.length;
    out.bytes += group.reduce((sum, g) => sum + g.bytes, 0);
    out.files.push(join(landingDir, name));
  }
  rmEmpty(join(landingDir, PENDING));
  return out;
}

function rmEmpty(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
}

function writeBatch(landingDir: string, group: readonly { name: string }[], tmp: string): void {
  const fd = openSync(tmp, 'w', 0o600);
  try {
    for (const { name } of group) {
      const text = readFileSync(join(landingDir, name));
      writeSync(fd, text);
      // the API ends every file with a newline; a line is never joined to the next file's
      if (text.length > 0 && text[text.length - 1] !== 0x0a) writeSync(fd, '\n');
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Finishes batches a run left halfway: a batch whose uploads were moved aside has its fsynced
 * `.tmp` file renamed into place (or already had); one whose file is missing gets its uploads back.
 * A `.tmp` batch file whose uploads were never moved is a copy: removed.
 */
export function recoverBatches(landingDir: string): void {
  const pendingRoot = join(landingDir, PENDING);
  const waiting = existsSync(pendingRoot) ? readdirSync(pendingRoot).sort() : [];
  for (const name of waiting) {
    const pending = join(pendingRoot, name);
    const tmp = join(landingDir, `.${name}.tmp`);
    const target = join(landingDir, name);
    if (existsSync(tmp)) renameSync(tmp, target);
    else if (!existsSync(target)) for (const upload of readdirSync(pending)) renameSync(join(pending, upload), join(landingDir, upload));
    fsyncDir(landingDir);
    rmSync(pending, { recursive: true, force: true });
  }
  for (const entry of readdirSync(landingDir)) {
    if (/^\.sdk-.*-batch-\d+-.*\.ndjson\.tmp$/.test(entry) && !waiting.includes(entry.slice(1, -'.tmp'.length))) rmSync(join(landingDir, entry), { force: true });
  }
  rmEmpty(pendingRoot);
}

/** The upload files in name (arrival) order, cut into runs of at most `maxBytes` (a larger file alone). */
function groups(landingDir: string, maxBytes: number): { name: string; bytes: number }[][] {
  const out: { name: string; bytes: number }[][] = [];
  let current: { name: string; bytes: number }[] = [];
  let size = 0;
  for (const name of readdirSync(landingDir).filter((n) => UPLOAD.test(n)).sort()) {
    const st = lstatSync(join(landingDir, name), { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    if (current.length > 0 && size + st.size > maxBytes) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push({ name, bytes: st.size });
    size += st.size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** 2026-11-24T10:00:00.000Z as 2026-11-24T10-00-00-000Z: no `:` in file names. */
function stamp(at: Date): string {
  return at.toISOString().replace(/[:.]/g, '-');
}
