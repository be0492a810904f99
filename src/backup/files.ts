import { constants, copyFileSync, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

export interface TreeOptions {
  /** Entries left out (names of files still being written). */
  skip?: (name: string, relative: string) => boolean;
  /** Only the files of the folder itself, not of its subfolders. */
  shallow?: boolean;
}

/**
 * Copies the regular files under `from/rel` to `to/rel`, keeping the layout; their relative paths.
 * A file gone between the listing and its copy (an event file taken in, a landing file archived by
 * a running load) is passed over: it is found again where it went, or is in the copy that took it.
 * Links and other non-regular entries are never followed.
 */
export function copyTree(from: string, to: string, rel: string, options: TreeOptions = {}): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(join(from, rel)).sort();
  } catch (error) {
    if (isGone(error)) return out;
    throw error;
  }
  for (const name of names) {
    const relative = join(rel, name);
    if (options.skip?.(name, relative)) continue;
    let st: Stats;
    try {
      st = lstatSync(join(from, relative));
    } catch (error) {
      if (isGone(error)) continue;
      throw error;
    }
    if (st.isDirectory()) {
      if (!options.shallow) out.push(...copyTree(from, to, relative, options));
    } else if (st.isFile() && copyOne(join(from, relative), join(to, relative))) out.push(relative);
  }
  return out;
}

/**
 * A copy, never a hard link: a load and a re-derive refuse a file with a second name (a link to a
 * secret file must not be read as trips), so a link would stop them. A file system that shares
 * blocks copy-on-write (btrfs, XFS) clones the file instead of copying its bytes.
 */
export function copyOne(source: string, target: string): boolean {
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  try {
    copyFileSync(source, target, constants.COPYFILE_FICLONE);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

const isGone = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** Names writers use while a file is not complete (the landing area's and the event files' rule). */
export const inProgress = (name: string): boolean =>
  /\.(tmp|part)$/i.test(name) || (name.startsWith('.') && name !== '.uploads-batched');

/**
 * The landing area in the order a running load moves its files: the files waiting at its top
 * first, then the SDK uploads being batched, then the archive. A file a load moves meanwhile is
 * moved to a place copied later, so it is copied once or twice (a load leaves out a byte-identical
 * copy), never missed; listing the archive first would miss a file archived between the two.
 */
export function copyLanding(from: string, to: string, landing: string): string[] {
  const skip = (name: string) => inProgress(name);
  return [
    ...copyTree(from, to, landing, { skip, shallow: true }),
    ...copyTree(from, to, `${landing}/.uploads-batched`, { skip }),
    ...copyTree(from, to, `${landing}/loaded`, { skip }),
  ];
}
