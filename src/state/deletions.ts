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

/** The requests no purge has acted on yet, oldest first, of every app: what the purge acts on. */
export async function pendingDeletions(db: StateQueries): Promise<StoredDeletionRequest[]> {
  return (await db.all('deletion_requests_pending')).map(requestOf);
}

/**
 * Marks requests done, with the trips the purge removed of each user, in the caller's transaction.
 * A request recorded while the purge ran is not among them: it stays for the next run.
 */
export async function markPurged(tx: StateQueries, done: { id: string; trips: number }[], at: Date): Promise<void> {
  for (const request of done)
    await tx.run('deletion_request_purged', {
      id: request.id,
      purged_at: at.toISOString(),
      purged_trips: request.trips,
    });
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
