import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fsyncDir, writeFileAtomic } from '../fsutil.js';

/** An integrator deleted an account: the API writes one of these, the next job purges the data. */
export interface DeletionRequest {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  requestedAt: string;
}

/**
 * Writes a file durably (content fsynced, renamed into place, folder fsynced). The API's fault
 * seam: tests pass one that fails as a full disk would.
 */
export type DurableWrite = (file: string, content: string) => void;

export const writeDurably: DurableWrite = (file, content) => writeFileAtomic(file, content, 0o644);

/** A request the API has written but not yet confirmed by marking the account: the jobs ignore it. */
export const PENDING_SUFFIX = '.pending';

const requestName = (request: DeletionRequest): string => `${request.requestedAt.replace(/[:.]/g, '-')}-${randomUUID()}.json`;

/** A confirmed request, written at once (the account is already marked deleted). */
export function writeDeletionRequest(dir: string, request: DeletionRequest, write: DurableWrite = writeDurably): string {
  const file = join(dir, requestName(request));
  write(file, JSON.stringify(request));
  return file;
}

/** Step 1 of a deletion: the request, durable but not yet acted on. Returns its file. */
export function writePendingDeletion(dir: string, request: DeletionRequest, write: DurableWrite = writeDurably): string {
  const file = join(dir, `${requestName(request)}${PENDING_SUFFIX}`);
  write(file, JSON.stringify(request));
  return file;
}

/** Step 3, once the account is marked deleted: the jobs act on the request from now on. */
export function confirmDeletion(pendingFile: string): string {
  const file = pendingFile.slice(0, -PENDING_SUFFIX.length);
  renameSync(pendingFile, file);
  fsyncDir(join(file, '..'));
  return file;
}

/** A pending request whose account was not marked: it never happened. */
export function discardPendingDeletion(pendingFile: string): void {
  rmSync(pendingFile, { force: true });
  fsyncDir(join(pendingFile, '..'));
}

export function readPendingDeletions(dir: string): { file: string; request: DeletionRequest }[] {
  return readRequests(dir, PENDING_SUFFIX);
}

/** The confirmed requests, oldest first: what the purge acts on. */
export function readDeletionRequests(dir: string): { file: string; request: DeletionRequest }[] {
  return readRequests(dir, '.json');
}

function readRequests(dir: string, suffix: string): { file: string; request: DeletionRequest }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix) && !name.startsWith('.'))
    .sort()
    .map((name) => ({ file: join(dir, name), request: JSON.parse(readFileSync(join(dir, name), 'utf8')) as DeletionRequest }));
}

export function removeDeletionRequests(files: string[]): void {
  for (const file of files) rmSync(file, { force: true });
}

/**
 * Every account with a recorded DELETE not yet purged, confirmed or pending (a pending one is
 * confirmed or discarded in the same request; an export between the two leaves the user out).
 */
export function deletedAccounts(dir: string): DeletionRequest[] {
  return [...readDeletionRequests(dir), ...readPendingDeletions(dir)].map((r) => r.request);
}
