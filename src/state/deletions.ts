import { randomUUID } from 'node:crypto';
import type { StateQueries, StateRow } from './db.js';

/** An integrator deleted an account: the API records one of these in the state store, the next job purges the data. */
export interface DeletionRequest {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  requestedAt: string;
}

/** A recorded request, by its id in the store (sql/ops/state/schema.sql, deletion_requests; the purge reads them, src/purge/purge.ts). */
export interface StoredDeletionRequest extends DeletionRequest {
  id: string;
}

/**
 * Records a DELETE's request in the state store, inside the caller's transaction (the one that
 * marks the account deleted), so both are committed, or neither. `id`: the request's own, or the
 * name of an earlier release's request file (recording it again adds nothing). False when a
 * request of that id was already there.
 */
export async function recordDeletion(
  tx: StateQueries,
  request: DeletionRequest,
  id: string = randomUUID(),
): Promise<boolean> {
  const added = await tx.run('deletion_request_insert', {
    id,
    app_id: request.appId,
    platform_user_id: request.platformUserId,
    org_user_id: request.orgUserId,
    requested_at: request.requestedAt,
  });
  return added > 0;
}

/**
 * The requests no purge has acted on yet, oldest first, of every app: what the purge acts on. With
 * a cell, only those of its drivers (docs/decisions.md, Cells): each cell purges its own.
 */
export async function pendingDeletions(db: StateQueries, cell: string | null = null): Promise<StoredDeletionRequest[]> {
  const rows = cell
    ? await db.all('deletion_requests_pending_in_cell', { cell })
    : await db.all('deletion_requests_pending');
  return rows.map(requestOf);
}

/**
 * Marks requests done, with the trips the purge removed of each user, in the caller's transaction.
 * Only the requests the purge read are marked: one recorded while the purge ran stays for the next
 * run. `purged_at` is when the purge acted (`at`, the wall clock as the marking is written, not the
 * batch's start time), and never before the request's own `requestedAt`: a request recorded by an
 * API machine whose clock runs ahead still reads as purged after it was requested.
 */
export async function markPurged(
  tx: StateQueries,
  done: { id: string; trips: number; requestedAt: string }[],
  at: Date = new Date(),
): Promise<void> {
  for (const request of done)
    await tx.run('deletion_request_purged', {
      id: request.id,
      purged_at: purgedAtOf(request.requestedAt, at),
      purged_trips: request.trips,
    });
}

/** `at` as an ISO instant, or `requestedAt` where that is later. */
function purgedAtOf(requestedAt: string, at: Date): string {
  const requested = Date.parse(requestedAt);
  return new Date(Number.isFinite(requested) ? Math.max(requested, at.getTime()) : at.getTime()).toISOString();
}

function requestOf(row: StateRow): StoredDeletionRequest {
  return {
    id: String(row['id']),
    appId: String(row['app_id']),
    platformUserId: Number(row['platform_user_id']),
    orgUserId: String(row['org_user_id'] ?? ''),
    requestedAt: String(row['requested_at']),
  };
}
