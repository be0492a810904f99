import { openState } from '../../src/state/open.js';
import { recordDeletion, type DeletionRequest } from '../../src/state/deletions.js';

/** A DELETE's request recorded in the data folder's state store, as the API records it (without the account's mark). */
export async function recordDeletionIn(dataDir: string, request: DeletionRequest): Promise<void> {
  const db = await openState({ dataDir });
  await db.transaction((tx) => recordDeletion(tx, request));
}
