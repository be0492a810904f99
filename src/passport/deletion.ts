import { firstLine } from '../errors.js';
import type { PassportStore } from './store.js';

/** The deletion could not be recorded (disk full, I/O error, the store unreachable): nothing changed. */
export class StorageUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the deletion request could not be recorded (${(cause as NodeJS.ErrnoException)?.code ?? firstLine(cause)})`);
    this.name = 'StorageUnavailableError';
  }
}

/**
 * Deleting an account durably (docs/decisions.md, Deletion): the account's mark, its tokens' removal
 * and the request the jobs purge by are one transaction of the shared state store
 * (PassportStore.deleteAccount), so any API process on any machine records it where every job
 * reads it, and a failure leaves nothing half-done: the answer is 503, the account is unchanged,
 * and a retry works.
 */
export class AccountDeletion {
  constructor(private readonly passport: PassportStore) {}

  /**
   * Deletes the active account of `orgUserId`; its platform user id, or null when there is none.
   *
   * @example const id = await deletion.delete(appId, 'driver-7', new Date()); // throws StorageUnavailableError when the store cannot commit
   */
  async delete(appId: string, orgUserId: string, now: Date): Promise<number | null> {
    try {
      return await this.passport.deleteAccount(appId, orgUserId, now);
    } catch (error) {
      // the transaction rolled back: nothing was deleted, which the 503 says
      throw new StorageUnavailableError(error);
    }
  }
}
