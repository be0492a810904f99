import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { fsyncDir } from '../fsutil.js';
import type { StateDb, StateQueries } from './db.js';
import { recordDeletion, type DeletionRequest } from './deletions.js';

/** A request file an earlier release's API had written but not yet confirmed (its account perhaps not marked). */
const PENDING = '.json.pending';
/**
 * A pending file of an active account younger than this may belong to a DELETE still running in
 * an API process of the earlier release (during a rolling upgrade): it is left for a later open.
 * An older one is a DELETE that never happened (its process died before the mark): discarded.
 */
export const PENDING_GRACE_MS = 10 * 60_000;

export interface DeletionFilesMigration {
  /** Request files recorded in the store by this call. */
  recorded: number;
  /** Pending files whose account was never marked deleted: discarded, as the earlier release's settle did. */
  discarded: number;
  /** Pending files of an active account, young enough to be a DELETE still running: left in place. */
  left: number;
}

/**
 * Takes the deletion request files of an earlier release (`requests/deletions/*.json`, and a
 * `.json.pending` whose account is marked deleted) into the state store, where every job reads
 * them, and removes each file once the store holds it. Runs at every open of the store, so files
 * an API process of the earlier release writes during a rolling upgrade are taken in by the next
 * process or job that starts. Each file is recorded under its own name, inside the store's write
 * transaction: of two processes starting together one records it and the other finds it there (or
 * the file already gone), so none is lost or counted twice, and a crash before the files are
 * removed only records them again as nothing.
 */
export async function migrateDeletionFiles(
  db: StateDb,
  dataDir: string,
  now = new Date(),
  log = (line: string) => void process.stderr.write(`${line}\n`),
): Promise<DeletionFilesMigration | null> {
  const dir = pathsFor(dataDir).deletionsDir;
  if (!existsSync(dir) || !statSync(dir).isDirectory() || requestFiles(dir).length === 0) return null;
  const done: string[] = [];
  const discarding = new Set<string>();
  const unreadable: string[] = [];
  const outcome = await db.transaction(async (tx) => {
    const counts: DeletionFilesMigration = { recorded: 0, discarded: 0, left: 0 };
    for (const name of requestFiles(dir)) {
      const request = readRequest(join(dir, name));
      // another process took it in and removed it since the listing
      if (request === null) continue;
      // never dropped silently (it may be someone's deletion): named at every open until an operator looks
      if (request === 'unreadable') {
        unreadable.push(name);
        continue;
      }
      const id = name.endsWith(PENDING) ? name.slice(0, -PENDING.length) : name.slice(0, -'.json'.length);
      if (name.endsWith(PENDING) && !(await markedDeleted(tx, request))) {
        if (now.getTime() - mtimeOf(join(dir, name)) < PENDING_GRACE_MS) {
          counts.left++;
          continue;
        }
        discarding.add(name);
      } else if (await recordDeletion(tx, request, id)) counts.recorded++;
      done.push(name);
    }
    return counts;
  });
  // only once the store has committed them; a discard, which the store does not record, counts for
  // the process that removes its file (of two that read it before either removed it, one)
  for (const name of done) if (removed(join(dir, name)) && discarding.has(name)) outcome.discarded++;
  if (done.length > 0) fsyncDir(dir);
  if (outcome.recorded > 0 || outcome.discarded > 0) {
    const discarded =
      outcome.discarded > 0
        ? `; ${outcome.discarded} pending request(s) of accounts never marked deleted discarded`
        : '';
    log(`state: migrated ${outcome.recorded} deletion request(s) from ${dir} into ${db.where}${discarded}`);
  }
  for (const name of unreadable)
    log(`state: ${join(dir, name)}: not a deletion request this release can read: left in place, not acted on`);
  return outcome;
}

/** Removes the file; false when another process had removed it. */
function removed(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Request files, confirmed and pending, by name (an earlier release named them by time, so oldest first). */
function requestFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.') && (n.endsWith('.json') || n.endsWith(PENDING)))
    .sort();
}

/** The file's request; null when it is gone, 'unreadable' when it holds none. */
function readRequest(file: string): DeletionRequest | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let r: Partial<DeletionRequest>;
  try {
    r = JSON.parse(text) as Partial<DeletionRequest>;
  } catch {
    return 'unreadable';
  }
  const platformUserId = Number(r.platformUserId);
  if (
    typeof r.appId !== 'string' ||
    !Number.isSafeInteger(platformUserId) ||
    typeof r.orgUserId !== 'string' ||
    typeof r.requestedAt !== 'string'
  )
    return 'unreadable';
  return { appId: r.appId, platformUserId, orgUserId: r.orgUserId, requestedAt: r.requestedAt };
}

function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

async function markedDeleted(tx: StateQueries, request: DeletionRequest): Promise<boolean> {
  return (
    (await tx.all('account_is_deleted', { platform_user_id: request.platformUserId, app_id: request.appId })).length > 0
  );
}
