import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';

/**
 * What an API machine's follower (serve.js --follow) knows, written to `follow/status.json` in its
 * data folder after every check of the source, and read by the API processes of the machine for
 * /readyz and /metrics (a cluster's workers are other processes than the follower).
 */
export interface FollowStatus {
  /** The job machine's data folder as rsync names it. */
  source: string;
  /** The last check of the source's manifest, successful or not (ISO time). */
  checkedAt: string;
  /** The last time the local manifest was the source's newest (ISO time; null: never). */
  inSyncAt: string | null;
  /** The last copy that switched the local manifest to a new publish (null: none yet). */
  lastCopy: {
    at: string;
    version: number;
    publishedAt: string;
    /** File data rsync sent for it (the change, not the history). */
    literalBytes: number;
    /** Bytes on the wire, rsync's protocol included. */
    wireBytes: number;
    files: number;
    seconds: number;
  } | null;
  /** Copies that switched the local manifest since the follower started. */
  copies: number;
  /** Why the last check or copy failed (null: it succeeded). */
  lastError: string | null;
  /** The source's newest publish as last read (null: never read). */
  sourceVersion: number | null;
  sourcePublishedAt: string | null;
}

export function followStatusFile(dataDir: string): string {
  return join(dataDir, 'follow', 'status.json');
}

export function writeFollowStatus(dataDir: string, status: FollowStatus): void {
  // readable by an API running as another user, like the published files
  writeFileAtomic(followStatusFile(dataDir), `${JSON.stringify(status, null, 2)}\n`, 0o644);
}

/** The follower's status, or null when this machine does not follow (or its follower has not written yet). */
export function readFollowStatus(dataDir: string): FollowStatus | null {
  try {
    return JSON.parse(readFileSync(followStatusFile(dataDir), 'utf8')) as FollowStatus;
  } catch {
    return null;
  }
}
