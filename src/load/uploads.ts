import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { createHash, randomUUID } from 'node:crypto';
import { basename, join } from 'node:path';
import { fsyncDir } from '../fsutil.js';
import { identityOf, sameIdentity, type FileIdentity } from './file-identity.js';
import { MAX_LINE_BYTES } from './scan-file.js';
import { kindOf } from './landing.js';
import { isMachineError } from '../machine-error.js';
import { BATCH, UPLOAD, UPLOAD_TEMP, timePrefix } from './upload-names.js';

// Importers across the service take the name functions from here.
export { isBatchFile, isSdkUploadFile, timePrefix, uploadFileName } from './upload-names.js';

/**
 * How old an upload's `.tmp` file must be to be taken as left by an API killed while writing it:
 * the API writes a body it already holds whole, so no upload is that long in the writing.
 */
export const STALE_UPLOAD_TEMP_MS = 3_600_000;

/**
 * Removes the upload `.tmp` files (regular files only, never through a link) last written more
 * than `maxAgeMs` before `now`: an API killed between writing an upload and renaming it leaves
 * one, which nothing else would ever remove (no 202 was sent for it: the SDK sends it again).
 * Returns the names removed.
 */
export function removeStaleUploadTemps(
  landingDir: string,
  now = Date.now(),
  maxAgeMs = STALE_UPLOAD_TEMP_MS,
): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(landingDir).filter((n) => UPLOAD_TEMP.test(n))) {
    const st = lstatSync(join(landingDir, name), { throwIfNoEntry: false });
    if (!st?.isFile() || st.mtimeMs > now - maxAgeMs) continue;
    rmSync(join(landingDir, name), { force: true });
    removed.push(name);
  }
  if (removed.length > 0) fsyncDir(landingDir);
  return removed;
}

/**
 * The files this load takes: all but the single SDK uploads that came after the batching listed the
 * area. Each would be a file of its own, paying a file's whole work (its derivation, a transaction,
 * a version) for one trip; the next load (in a watch, the next batch) batches them with the rest.
 */
export function uploadsInTurn(files: string[], listed: Set<string> | null): { files: string[]; later: number } {
  if (listed === null) return { files, later: 0 };
  const taken = files.filter((f) => !UPLOAD.test(basename(f)) || listed.has(basename(f)));
  return { files: taken, later: files.length - taken.length };
}

/** Where the uploads of a batch wait while its file is made (a `.` name: never loaded). */
const PENDING = '.uploads-batched';

export interface UploadBatches {
  /** Upload files put into batch files (their duplicates included). */
  uploads: number;
  /** Uploads byte-identical to an earlier upload or to a loaded file: removed, as a load of them one by one would skip them. */
  duplicates: number;
  /** The batch files made, each now an ordinary landing file. */
  files: string[];
  bytes: number;
  /** Upload `.tmp` files an API left when it was killed while writing them, removed (`removeStaleUploadTemps`). */
  staleTemps: number;
  /** Why batching stopped early, if it did (the uploads not batched load as files of their own). */
  error?: string;
  /**
   * The upload files the batching listed (batched or not); null when it listed none (batching off,
   * or its folder refused). An upload that came after the listing waits for the next load: a file
   * of its own would pay a file's work for one upload (src/jobs/load.ts).
   */
  listed: Set<string> | null;
}

/** What the warehouse knows of uploads (src/jobs/load.ts answers from loaded_files and loaded_uploads). */
export interface UploadLedger {
  /** Which of these SHA-256 keys were loaded: as a file, or as an upload inside a loaded batch file. */
  known(keys: string[]): Promise<Set<string>>;
  /** Records the uploads a batch file (by its SHA-256) holds, before it is put in place. */
  record(batchKey: string, uploadKeys: string[]): Promise<void>;
  /** Whether a batch file of this name was loaded (it may have been archived since). */
  batchLoaded(name: string): Promise<boolean>;
}

interface Upload {
  name: string;
  identity: FileIdentity;
  bytes: Buffer;
  key: string;
}

/**
 * Puts the SDK upload files waiting in the landing area together into batch files of up to
 * `maxBytes` each, in arrival order, before the load lists the area. Every upload is a file of its
 * own (the API answers 202 once its file is renamed into place), and the load pays its per-file
 * work (a transaction, a version, a points file and a route file) for each, many times what an
 * upload costs batched (docs/benchmarks.md). A batch holds its uploads'
 * lines in order, so a later upload of a trip still wins over an earlier one, as between files,
 * and the result is the one loading them one by one gives (test/load/upload-batches.test.ts):
 * - an upload byte-identical to an earlier upload, or to a file already loaded (the `ledger`
 *   says which keys are), is left out, as the load skips a known file;
 * - only regular files are read, never through a link, and only a file that is still the one that
 *   was read when it is moved aside goes in: otherwise the batch is undone and its uploads load as
 *   files of their own;
 * - a file the load would refuse whole (not UTF-8, a line over 32 MiB) stays a file of its own,
 *   so it fails alone.
 *
 * Crash-safe: the uploads are moved into `.uploads-batched/<batch>/` first; the batch file is
 * written from what was read, fsynced and renamed into place; then the folder is removed. Until
 * that rename the folder is the truth: the next load (`recoverBatches`) moves its uploads back,
 * unless the batch file is in place or was loaded.
 * `maxBytes` 0 leaves every upload a file of its own.
 */
export async function batchUploads(landingDir: string, maxBytes: number, ledger: UploadLedger): Promise<UploadBatches> {
  const out: UploadBatches = { uploads: 0, duplicates: 0, files: [], bytes: 0, staleTemps: 0, listed: null };
  // the landing folder itself may be a link the operator made (to a larger disk); what is in it is never followed
  if (!existsSync(landingDir)) return out;
  // whatever the landing area holds, the load goes on: uploads not batched load as files of their own
  try {
    out.staleTemps = removeStaleUploadTemps(landingDir).length;
    const refused = await recoverBatches(landingDir, ledger);
    if (refused) return { ...out, error: refused };
    if (maxBytes <= 0) return out;
    let group: Upload[] = [];
    let size = 0;
    // every key met so far, in arrival order: a copy in a later batch is as known as one in the same
    const seen = new Set<string>();
    const flush = async () => {
      if (group.length > 0)
        await makeBatch(landingDir, group, await ledger.known(group.map((u) => u.key)), seen, ledger, out);
      group = [];
      size = 0;
    };
    const names = readdirSync(landingDir)
      .filter((n) => UPLOAD.test(n))
      .sort();
    out.listed = new Set(names);
    for (const name of names) {
      const upload = readUpload(landingDir, name, maxBytes);
      // a file that cannot join a batch keeps its place between batches: arrival order holds
      if (!upload) {
        await flush();
        continue;
      }
      if (size + upload.bytes.length > maxBytes) await flush();
      group.push(upload);
      size += upload.bytes.length;
    }
    await flush();
  } catch (error) {
    // a full disk fails the load (its files stay where they are, the continuous load tries again);
    // anything else leaves the uploads not batched to load as files of their own
    if (isMachineError(error)) throw error;
    out.error = error instanceof Error ? error.message : String(error);
  } finally {
    try {
      rmEmpty(join(landingDir, PENDING));
    } catch {
      // left for the next run
    }
  }
  return out;
}

/** One upload, read through a descriptor that never follows a link; null when it cannot join a batch. */
function readUpload(landingDir: string, name: string, maxBytes: number): Upload | null {
  const path = join(landingDir, name);
  let identity: FileIdentity;
  let fd: number;
  try {
    identity = identityOf(path);
    // O_NONBLOCK: a FIFO put in its place must not block the load
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (identity.size > maxBytes || !sameIdentity(identity, fstatSync(fd))) return null;
    const bytes = readFileSync(fd);
    if (bytes.length !== identity.size || !isUtf8(bytes) || longestLine(bytes) > MAX_LINE_BYTES) return null;
    // a byte-order mark opens a file, never a line: the load's reader skips it there only
    const text = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
    return { name, identity, bytes: text, key: createHash('sha256').update(bytes).digest('hex') };
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes one batch file of `group`, less the uploads whose bytes are `known` (loaded) or `seen`
 * earlier; these copies are removed (a load of them one by one would skip them). Fewer than two
 * new uploads make no batch: the one left loads as a file of its own.
 */
async function makeBatch(
  landingDir: string,
  group: Upload[],
  known: Set<string>,
  seen: Set<string>,
  ledger: UploadLedger,
  out: UploadBatches,
): Promise<void> {
  const kept = group.filter((u) => {
    const fresh = !known.has(u.key) && !seen.has(u.key);
    seen.add(u.key);
    return fresh;
  });
  if (kept.length < 2) {
    for (const u of group) {
      if (kept.includes(u)) continue;
      const st = lstatSync(join(landingDir, u.name), { throwIfNoEntry: false });
      if (st?.isFile() && sameIdentity(u.identity, st)) {
        rmSync(join(landingDir, u.name));
        out.duplicates++;
      }
    }
    return;
  }
  const last = group[group.length - 1] as Upload;
  const name = `${timePrefix(last.name)}-batch-${kept.length}-${randomUUID()}.ndjson`;
  const content = Buffer.concat(
    kept.flatMap((u) =>
      u.bytes.length > 0 && u.bytes[u.bytes.length - 1] !== 0x0a ? [u.bytes, Buffer.from('\n')] : [u.bytes],
    ),
  );
  const work = holdingFolder(landingDir);
  const pending = join(work, name);
  mkdirSync(pending, { mode: 0o700 });
  fsyncDir(work);
  // the batch file's key and its uploads', before it exists: they count as loaded once it is
  await ledger.record(
    createHash('sha256').update(content).digest('hex'),
    kept.map((u) => u.key),
  );
  try {
    for (const u of group) {
      renameSync(join(landingDir, u.name), join(pending, u.name));
      // still the file that was read: not replaced, appended to or turned into a link since
      const st = lstatSync(join(pending, u.name));
      if (!st.isFile() || !sameIdentity(u.identity, st))
        throw new Error(`${u.name} changed while it was batched: its batch is undone`);
    }
    fsyncDir(pending);
    fsyncDir(landingDir);
    const tmp = join(landingDir, `.${name}.tmp`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeFileSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    undo(landingDir, pending, name);
    throw error;
  }
  // from here the batch file is the uploads' copy: whatever fails next, the next run's recovery
  // sees it in place or loaded and removes the uploads held aside, never loads them again
  renameSync(join(landingDir, `.${name}.tmp`), join(landingDir, name));
  out.uploads += group.length;
  out.duplicates += group.length - kept.length;
  out.bytes += content.length;
  out.files.push(join(landingDir, name));
  fsyncDir(landingDir);
  rmSync(pending, { recursive: true, force: true });
  fsyncDir(work);
}

/**
 * The folder uploads wait in while their batch file is made: a real folder of this process's user,
 * made if missing. Anything else in its place (a link, another user's folder) is refused.
 */
function holdingFolder(landingDir: string): string {
  const work = join(landingDir, PENDING);
  if (kindOf(work) === null) mkdirSync(work, { mode: 0o700 });
  const st = lstatSync(work);
  if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()))
    throw new Error(`${work} is not the load's own folder: uploads not batched`);
  return work;
}

/**
 * Finishes what a load left halfway, before anything else: a batch whose file is in place, or was
 * loaded, has its waiting uploads removed (they are in it); any other has them moved back and its
 * `.tmp` file removed. Returns why batching must not run, if the folder is not one the load made
 * (a link, a file or another user's folder in its place is left alone: never followed).
 */
export async function recoverBatches(
  landingDir: string,
  ledger: Pick<UploadLedger, 'batchLoaded'>,
): Promise<string | undefined> {
  const work = join(landingDir, PENDING);
  let waiting: string[] = [];
  if (kindOf(work) !== null) {
    try {
      holdingFolder(landingDir);
    } catch (error) {
      return `${(error as Error).message} (left alone)`;
    }
    waiting = readdirSync(work)
      .filter((n) => BATCH.test(n) && kindOf(join(work, n)) === 'folder')
      .sort();
  }
  for (const name of waiting) {
    const pending = join(work, name);
    if (kindOf(join(landingDir, name)) === 'file' || (await ledger.batchLoaded(name)))
      rmSync(pending, { recursive: true, force: true });
    else undo(landingDir, pending, name);
  }
  if (waiting.length > 0) fsyncDir(work);
  if (kindOf(work) === 'folder') rmEmpty(work);
  for (const entry of readdirSync(landingDir)) {
    const batch = entry.startsWith('.') && entry.endsWith('.tmp') ? entry.slice(1, -'.tmp'.length) : '';
    if (BATCH.test(batch) && kindOf(join(landingDir, entry)) === 'file')
      rmSync(join(landingDir, entry), { force: true });
  }
  return undefined;
}

/**
 * Moves a batch's uploads back into the landing area and removes what was made of it. An upload
 * whose name was taken meanwhile comes back under the same time with a new id (its place in the
 * order kept); what is not an upload file (a link put there) is removed, never followed.
 */
function undo(landingDir: string, pending: string, name: string): void {
  for (const upload of readdirSync(pending)) {
    if (!UPLOAD.test(upload) || kindOf(join(pending, upload)) !== 'file') continue;
    const back = kindOf(join(landingDir, upload)) === null ? upload : `${timePrefix(upload)}-${randomUUID()}.ndjson`;
    renameSync(join(pending, upload), join(landingDir, back));
  }
  const tmp = join(landingDir, `.${name}.tmp`);
  if (kindOf(tmp) === 'file') rmSync(tmp);
  fsyncDir(landingDir);
  rmSync(pending, { recursive: true, force: true });
}

function longestLine(bytes: Buffer): number {
  let longest = 0;
  let start = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, start)) {
    longest = Math.max(longest, i - start);
    start = i + 1;
  }
  return Math.max(longest, bytes.length - start);
}

function rmEmpty(dir: string): void {
  if (kindOf(dir) === 'folder' && readdirSync(dir).length === 0) rmdirSync(dir);
}
