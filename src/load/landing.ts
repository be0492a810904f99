import { InputError } from '../errors.js';
import { isInputName } from '../landing-status.js';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { renameBadNames, type RenamedInput } from './safe-names.js';

/** An input that was found but not taken: never followed, left where it is, reported. */
export interface RefusedInput {
  file: string;
  reason: 'not_a_regular_file';
  /** What it is instead: `symbolic link`, `hard link` (a file with more than one name), `folder`, `FIFO`, `socket`, `device`. */
  kind: string;
}

export interface Inputs {
  files: string[];
  refused: RefusedInput[];
  /** Landing files whose name was not valid UTF-8, renamed before they were listed (src/load/safe-names.ts). */
  renamed?: RenamedInput[];
}

/**
 * Files in the landing area, oldest name first. Only regular files of one name are taken: a
 * symbolic link is never followed and a hard link (st_nlink > 1) never read (a link to the apps
 * file would put its secrets into the quarantine), and a FIFO would block the load; all are
 * reported and left alone. Names of files still being written
 * (`.name`, `*.tmp`, `*.part`) are ignored. A name that is not valid UTF-8 is made valid first.
 */
export function landingFiles(landingDir: string): Inputs {
  if (!existsSync(landingDir)) return { files: [], refused: [] };
  const renamed = renameBadNames(landingDir);
  const found = sorted(
    readdirSync(landingDir)
      .filter(isInputName)
      .map((name) => join(landingDir, name)),
  );
  return renamed.length > 0 ? { ...found, renamed } : found;
}

/** `--input` values: files, or folders whose input files are taken in name order, by the same rules. */
export function expandInputs(inputs: string[]): Inputs {
  const out: Inputs = { files: [], refused: [] };
  for (const input of inputs) {
    const path = resolve(input);
    const kind = kindOf(path);
    if (kind === null) throw new InputError(`--input ${input}: no such file or folder`);
    if (kind === 'folder') {
      const found = sorted(
        readdirSync(path)
          .filter(isInputName)
          .map((n) => join(path, n)),
      );
      if (found.files.length + found.refused.length === 0)
        throw new InputError(`--input ${input}: no .ndjson, .ndjson.gz, .jsonl or .parquet files in this folder`);
      out.files.push(...found.files);
      out.refused.push(...found.refused);
    } else if (kind === 'file') out.files.push(path);
    else out.refused.push({ file: path, reason: 'not_a_regular_file', kind });
  }
  return out;
}

function sorted(paths: string[]): Inputs {
  const out: Inputs = { files: [], refused: [] };
  for (const path of paths.sort()) {
    const kind = kindOf(path);
    if (kind === 'file') out.files.push(path);
    // gone since the listing (renamed by its writer): the next run sees it under its new name
    else if (kind !== null) out.refused.push({ file: path, reason: 'not_a_regular_file', kind });
  }
  return out;
}

/** What is at `path` itself (lstat: a link is a link, whatever it points to); null when nothing. */
export function kindOf(path: string): string | null {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return null;
  }
  // a second name of a file (a hard link to apps.json, say) is refused like a symbolic link: the
  // load would otherwise read, quarantine and archive whatever file it names
  if (st.isFile()) return st.nlink > 1 ? 'hard link' : 'file';
  if (st.isDirectory()) return 'folder';
  if (st.isSymbolicLink()) return 'symbolic link';
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  return 'device';
}

/**
 * Moves a landing file out of the way of the next run: into `loaded/<day>/` once it is safely in
 * the warehouse, or `failed/<day>/` (with a `.reason.txt`) when it could not be read at all.
 * A name already there gets a time prefix instead of replacing the earlier file. Null when the
 * file was gone.
 */
export function moveLanded(
  landingDir: string,
  path: string,
  day: string,
  outcome: 'loaded' | 'failed',
  reason?: string,
): string | null {
  const dir = join(landingDir, outcome, day);
  mkdirSync(dir, { recursive: true });
  let target = join(dir, basename(path));
  if (existsSync(target)) target = join(dir, `${Date.now()}-${basename(path)}`);
  // the reason first: a disk with no room for it fails the move with the file still in place,
  // never set aside without its reason
  if (reason) writeReason(`${target}.reason.txt`, `${reason}\n`);
  try {
    renameSync(path, target);
  } catch (error) {
    if (reason) rmSync(`${target}.reason.txt`, { force: true });
    // renamed or removed by its writer meanwhile: under a new name it is listed again
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return target;
}

/** Writes a reason whole or not at all (a full disk leaves no empty `.reason.txt`). */
function writeReason(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    rmSync(file, { force: true });
    throw error;
  }
}
