import type { StateDb, StateQueries } from './db.js';

/**
 * The purge's step in the state store for deleted accounts: their tokens' hashes and their user id
 * at the integrator go (the row keeps only the platform user id, so it is never handed out again),
 * and the store's files are made to hold no copy of them (`reclaim`). Runs again harmlessly.
 * `also` runs in the same transaction (the purge marks its requests done there).
 */
export async function eraseAccounts(
  db: StateDb,
  users: { appId: string; platformUserId: number }[],
  also?: (tx: StateQueries) => Promise<void>,
): Promise<void> {
  if (users.length === 0) return;
  await db.transaction(async (tx) => {
    for (const user of users) {
      await tx.run('tokens_of_user_delete', { platform_user_id: user.platformUserId, app_id: user.appId });
      await tx.run('account_erase', { platform_user_id: user.platformUserId });
    }
    await also?.(tx);
  });
  await db.reclaim();
}
