import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';

/** What a backup folder holds, written last (docs/operating.md, Backup). */
export interface BackupManifest {
  format: 1;
  /** When the copy was taken (its parts within the backup's run, each consistent in itself). */
  createdAt: string;
  release: { name: string; version: string; commit: string | null };
  /** The data folder copied (for the operator; restore never reads it). */
  dataDir: string;
  state: { dialect: 'sqlite' | 'postgres'; where: string; version: string };
  outbox: { copied: 'by the deliverer' | 'read-only' | 'none' | 'in the state dump'; duckdb: string | null };
  /** Every file of the backup but this one: path relative to the backup folder, bytes, SHA-256. */
  files: BackupFile[];
}

export interface BackupFile {
  path: string;
  bytes: number;
  sha256: string;
}

export const MANIFEST = 'manifest.json';
export const STATE_SQLITE = 'state/state.sqlite';
export const STATE_PG_DUMP = 'state/state.pgdump';
export const OUTBOX = 'webhooks/outbox.duckdb';
/** Folders copied whole, in the order restore lays them down. */
export const FOLDERS = { events: 'events/pending', deletions: 'requests/deletions', landing: 'landing' } as const;

export function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

export async function describeFile(root: string, path: string): Promise<BackupFile> {
  const full = join(root, path);
  return { path, bytes: statSync(full).size, sha256: await sha256Of(full) };
}

/**
 * The manifest of a backup folder, every file checked against it: a missing, shortened or
 * changed file (or a manifest that is not one) is bad input naming it, so a damaged backup is
 * refused before anything is restored from it.
 */
export async function verifiedManifest(
  dir: string,
  progress: (line: string) => void = () => undefined,
): Promise<BackupManifest> {
  const file = join(dir, MANIFEST);
  if (!existsSync(file))
    throw new InputError(`--from ${dir}: no ${MANIFEST}: not a backup, or one that did not finish`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as BackupManifest;
  } catch {
    throw new InputError(`--from ${dir}: ${MANIFEST} is damaged (not JSON)`);
  }
  if (manifest?.format !== 1 || !Array.isArray(manifest.files) || !manifest.state)
    throw new InputError(`--from ${dir}: ${MANIFEST} is not a backup manifest this release reads`);
  let bytes = 0;
  for (const f of manifest.files) {
    // a path from the manifest never leads out of the backup folder
    if (typeof f.path !== 'string' || f.path.startsWith('/') || f.path.split('/').includes('..'))
      throw new InputError(`--from ${dir}: ${MANIFEST} names a path outside the backup: ${String(f.path)}`);
    const full = join(dir, f.path);
    if (!existsSync(full)) throw new InputError(`--from ${dir}: damaged backup: ${f.path} is missing`);
    const size = statSync(full).size;
    if (size !== f.bytes)
      throw new InputError(`--from ${dir}: damaged backup: ${f.path} has ${size} bytes, the manifest says ${f.bytes}`);
    if ((await sha256Of(full)) !== f.sha256)
      throw new InputError(`--from ${dir}: damaged backup: ${f.path} does not match its SHA-256`);
    bytes += size;
  }
  progress(
    `restore: ${manifest.files.length} file(s), ${bytes} bytes, match the manifest of ${manifest.createdAt} (release ${manifest.release.version}${manifest.release.commit ? `, ${manifest.release.commit}` : ''})`,
  );
  return manifest;
}
