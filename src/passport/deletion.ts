import { basename } from 'node:path';
import type { PassportStore } from './store.js';
import {
  confirmDeletion, discardPendingDeletion, readPendingDeletions, writeDurably, writePendingDeletion, type DurableWrite,
} from '../purge/requests.js';

/** The deletion request could not be made durable (disk full, I/O error, read-only folder): nothing changed. */
export class StorageUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the deletion request could not be written (${(cause as NodeJS.ErrnoException)?.code ?? String(cause)})`);
    this.name = 'StorageUnavailableError';
  }
}

/**
 * Deleting an account durably (docs/decisions.md, Deletion): the request is written and fsynced first (as
 * `.pending`, which the jobs ignore), then the account is marked deleted, then the request is
 * confirmed (renamed to `.json`, what the purge acts on). A failed write changes nothing; a failed
 * mark discards the request; a process that dies between the steps leaves a pending request that
 * `settle()` resolves from the passport store at the next start (confirmed when the account is
 * marked, discarded when it is still active). So the jobs never purge an active account, and a
 * retried DELETE always converges.
 */
export class AccountDeletion {
  /** Pending requests of DELETEs still running in this process: settle() leaves them alone. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly passport: PassportStore,
    private readonly dir: string,
    private readonly write: DurableWrite = writeDurably,
  ) {}

  /**
   * Deletes the active account of `orgUserId`; its platform user id, or null when there is none.
   *
   * @example const id = await deletion.delete(appId, 'driver-7', new Date()); // throws StorageUnavailableError on a full disk
   */
  async delete(appId: string, orgUserId: string, now: Date): Promise<number | null> {
    // leftovers of an earlier failure; one that cannot be resolved now waits for the next call
    await this.settle().catch(() => undefined);
    const userId = await this.passport.activeAccount(appId, orgUserId);
    if (userId === null) return null;
    let pending: string;
    try {
      pending = writePendingDeletion(this.dir, { appId, platformUserId: userId, orgUserId, requestedAt: now.toISOString() }, this.write);
    } catch (error) {
      throw new StorageUnavailableError(error);
    }
    this.inFlight.add(basename(pending));
    try {
      let marked: boolean;
      try {
        marked = await this.passport.markDeleted(appId, orgUserId, userId, now);
      } catch (error) {
        discardPendingDeletion(pending);
        throw error;
      }
      // deleted meanwhile by a concurrent DELETE, whose own request stands
      if (!marked) {
        discardPendingDeletion(pending);
        return null;
      }
      // the mark is durable: a rename that fails here is redone by settle() at the next start
      try {
        confirmDeletion(pending);
      } catch {
        // left pending on purpose
      }
      return userId;
    } finally {
      this.inFlight.delete(basename(pending));
    }
  }

  /** Resolves pending requests left by a process that died mid-deletion (or a failed confirm). */
  async settle(): Promise<{ confirmed: number; discarded: number }> {
    let confirmed = 0;
    let discarded = 0;
    for (const { file, request } of readPendingDeletions(this.dir)) {
      if (this.inFlight.has(basename(file))) continue;
      if (await this.passport.isDeleted(request.appId, request.platformUserId)) {
        confirmDeletion(file);
        confirmed++;
      } else {
        discardPendingDeletion(file);
        discarded++;
      }
    }
    return { confirmed, discarded };
  }
}
