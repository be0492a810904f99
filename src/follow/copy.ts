import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Manifest } from '../publish/manifest.js';
import { EXTRAS_SUFFIX } from '../serving/format.js';
import { rsync, RsyncError, sourcePath, type RsyncStats } from './rsync.js';

/** The source names a file that is gone (it published again meanwhile): the copy starts over. */
export class SourceMovedOn extends Error {}

/** Every file of published/ a manifest names: its slot, and each serving file with its extras. */
export function namedFiles(manifest: Manifest): string[] {
  const pack = Object.values(manifest.pack?.files ?? {}).flatMap((names: string[] | string) =>
    Array.isArray(names) ? names : [names],
  );
  return [manifest.file, ...pack.flatMap((name) => [name, `${name}${EXTRAS_SUFFIX}`])];
}

/**
 * The source's manifest, fetched beside the follower's status (never over the served one), and its
 * text. rsync's quick check (size and modification time) makes an unchanged manifest cost a listing.
 */
export async function fetchManifest(source: string, followDir: string, rsyncBinary?: string): Promise<string> {
  mkdirSync(followDir, { recursive: true });
  const local = join(followDir, 'source-manifest.json');
  try {
    // --checksum: a manifest rewritten within the same second with the same size is still seen
    await rsync(['--times', '--checksum', sourcePath(source, 'published', 'manifest.json'), local], rsyncBinary);
  } catch (error) {
    if (error instanceof RsyncError && /No such file|link_stat/.test(error.message))
      throw new RsyncError('the source has published nothing yet (no published/manifest.json)', error.code);
    throw error;
  }
  return readFileSync(local, 'utf8');
}

/**
 * Copies what `manifest` names from the source into `publishedDir`: the route files first (the
 * whole routes/ tree, its removals included: a purge rewrites a file, retention removes one), then
 * the slot and the serving files. Each file is written under a temporary name and renamed into
 * place by rsync, so a reader never sees a half file; the manifest itself is not written here.
 * A slot is copied as a delta against the follower's copy of the same name, or (--fuzzy) against
 * the other slot when that one was removed: what moves follows the change.
 */
export async function copyNamed(
  source: string,
  publishedDir: string,
  followDir: string,
  manifest: Manifest,
  rsyncBinary?: string,
): Promise<RsyncStats> {
  mkdirSync(publishedDir, { recursive: true });
  const routes = await rsync(
    [
      '--recursive',
      '--times',
      '--delete',
      '--include=/routes/***',
      '--exclude=*',
      `${sourcePath(source, 'published')}/`,
      `${publishedDir}/`,
    ],
    rsyncBinary,
  );
  const list = join(followDir, 'files-from');
  // named from the data folder's root: rsync's daemon resolves a --files-from list against the
  // module's root, whatever folder of it the source names
  writeFileSync(
    list,
    `${namedFiles(manifest)
      .map((name) => `published/${name}`)
      .join('\n')}\n`,
  );
  let files: RsyncStats;
  try {
    files = await rsync(
      ['--times', '--fuzzy', `--files-from=${list}`, `${source.replace(/\/+$/, '')}/`, `${dirname(publishedDir)}/`],
      rsyncBinary,
    );
  } catch (error) {
    // rsync's codes 23 and 24: a file named is gone, since the source published again and removed it
    if (error instanceof RsyncError && (error.code === 23 || error.code === 24)) throw new SourceMovedOn(error.message);
    throw error;
  }
  const named = files.files.map((name) => name.replace(/^published\//, ''));
  return {
    files: [...routes.files, ...named],
    literalBytes: routes.literalBytes + files.literalBytes,
    matchedBytes: routes.matchedBytes + files.matchedBytes,
    wireBytes: routes.wireBytes + files.wireBytes,
  };
}
