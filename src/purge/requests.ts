import type { StateDb, StateLocation } from '../state/db.js';
import { currentCell } from '../cell.js';
import { openState } from '../state/open.js';
import { pendingDeletions, type DeletionRequest } from '../state/deletions.js';

export type { DeletionRequest } from '../state/deletions.js';

/**
 * Every account with a recorded DELETE not yet purged, of every app (export leaves them out: a
 * DELETE answered before the purge ran), read from the state store that every API process writes.
 */
export async function deletedAccounts(location: StateLocation | StateDb): Promise<DeletionRequest[]> {
  const db = 'all' in location ? location : await openState(location);
  return (await pendingDeletions(db, currentCell())).map(({ appId, platformUserId, orgUserId, requestedAt }) => ({
    appId,
    platformUserId,
    orgUserId,
    requestedAt,
  }));
}
