import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { hashSecret, newSecret } from '../secrets.js';
import type { StateDb, StateLocation, StateQueries } from '../state/db.js';
import { openState } from '../state/open.js';
import { recordDeletion } from '../state/deletions.js';
import { assignIn, CellDirectory } from '../cells/directory.js';

/** Platform user ids: random (not sequential, so they reveal nothing), positive, below 2^53. */
export function newPlatformUserId(): number {
  const value = randomBytes(8).readBigUInt64BE() % (2n ** 53n - 1n);
  return Number(value + 1n);
}

/**
 * Accounts and tokens (docs/decisions.md, Deletion), in the state store that every API process shares
 * (docs/decisions.md, Storage and processes). Nothing is cached in the process: every answer is the store's at the moment of
 * the request, so a DELETE or a token issued by one process counts at the next request to any
 * other. A token check is one lookup by primary key.
 */
export class PassportStore {
  /** Which cell each driver's data lives in (docs/decisions.md, Cells). */
  readonly cells: CellDirectory;

  private constructor(private readonly db: StateDb) {
    this.cells = new CellDirectory(db);
  }

  /** The store of a data folder, given its passport file of earlier releases or where the state is. */
  static async open(where: string | StateLocation): Promise<PassportStore> {
    const location = typeof where === 'string' ? { dataDir: dirname(dirname(where)) } : where;
    return new PassportStore(await openState(location));
  }

  /** The active account of each user, creating the missing ones, through a store opened for it alone. */
  static async ensureAccountsIn(
    where: string | StateLocation,
    appId: string,
    orgUserIds: string[],
  ): Promise<Map<string, number>> {
    const store = await PassportStore.open(where);
    try {
      return await store.ensureAccounts(appId, orgUserIds);
    } finally {
      store.close();
    }
  }

  /** The active account of each user, creating the missing ones. */
  ensureAccounts(appId: string, orgUserIds: string[], now = new Date()): Promise<Map<string, number>> {
    return this.db.transaction((tx) => ensureIn(tx, appId, orgUserIds, now));
  }

  /** The active account's platform user id, or null (never registered, or deleted). */
  async activeAccount(appId: string, orgUserId: string): Promise<number | null> {
    return (await this.activeAccountCell(appId, orgUserId))?.userId ?? null;
  }

  /**
   * The active account and the cell its data lives in (null: no cells), in one lookup; null without
   * one. While the driver moves: the cell it comes from, and the version of its new cell that
   * serves it (null: not yet).
   */
  async activeAccountCell(
    appId: string,
    orgUserId: string,
  ): Promise<{ userId: number; cell: string | null; moving?: { from: string; arrivedVersion: number | null } } | null> {
    const [row] = await this.db.all('account_active', { app_id: appId, org_user_id: orgUserId });
    if (!row) return null;
    const cell = row['cell'];
    const from = row['previous_cell'];
    const arrived = row['arrived_version'];
    return {
      userId: Number(row['platform_user_id']),
      cell: cell === null || cell === undefined ? null : String(cell),
      ...(from === null || from === undefined
        ? {}
        : {
            moving: {
              from: String(from),
              arrivedVersion: arrived === null || arrived === undefined ? null : Number(arrived),
            },
          }),
    };
  }

  /** How many accounts are active (the store is read at each request; nothing to load first). */
  async warmAccounts(): Promise<number> {
    return Number((await this.db.all('accounts_active_count'))[0]?.['n'] ?? 0);
  }

  /** How many tokens resolve at `now`. */
  async activeTokens(now: Date): Promise<number> {
    return Number((await this.db.all('tokens_active_count', { now_ms: now.getTime() }))[0]?.['n'] ?? 0);
  }

  /** Removes tokens expired at `now` (they never resolve again): their hashes leave the store. */
  sweepTokens(now: Date): Promise<number> {
    return this.db.run('tokens_sweep', { now_ms: now.getTime() });
  }

  /**
   * the token issue: the active account (created when there is none) gets a new token valid for
   * `validMs`. Only the token's hash is stored.
   */
  async issueToken(
    appId: string,
    orgUserId: string,
    now: Date,
    validMs: number,
  ): Promise<{ token: string; platformUserId: number }> {
    const token = newSecret('pt_');
    const platformUserId = await this.db.transaction(async (tx) => {
      const id = (await ensureIn(tx, appId, [orgUserId], now)).get(orgUserId) as number;
      await tx.run('token_insert', {
        token_hash: hashSecret(token),
        app_id: appId,
        platform_user_id: id,
        issued_at: now.toISOString(),
        expires_ms: now.getTime() + validMs,
      });
      return id;
    });
    return { token, platformUserId };
  }

  /** The token lookup: the holder of a valid token of this app, or null (unknown, expired, revoked, or another app's). */
  async tokenHolder(
    appId: string,
    token: string,
    now: Date,
  ): Promise<{ platformUserId: number; orgUserId: string } | null> {
    const owner = await this.tokenOwner(token, now);
    return owner && owner.appId === appId ? { platformUserId: owner.platformUserId, orgUserId: owner.orgUserId } : null;
  }

  /** The app and holder of a valid token, whichever app issued it (the SDK presents only the token). */
  async tokenOwner(
    token: string,
    now: Date,
  ): Promise<{ appId: string; platformUserId: number; orgUserId: string } | null> {
    const rows = await this.db.all('token_owner', { token_hash: hashSecret(token), now_ms: now.getTime() });
    const row = rows[0];
    return row
      ? {
          appId: String(row['app_id']),
          platformUserId: Number(row['platform_user_id']),
          orgUserId: String(row['org_user_id']),
        }
      : null;
  }

  /**
   * Marks account `userId` (the active one of `orgUserId`) deleted and removes its tokens, in one
   * committed transaction. False when it is no longer the active account.
   */
  async markDeleted(appId: string, _orgUserId: string, userId: number, now: Date): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const marked = await tx.run('account_mark_deleted', {
        now: now.toISOString(),
        platform_user_id: userId,
        app_id: appId,
      });
      if (marked > 0) await tx.run('tokens_of_user_delete', { platform_user_id: userId, app_id: appId });
      return marked > 0;
    });
  }

  /**
   * A DELETE (docs/decisions.md, Deletion): the active account of `orgUserId` is marked deleted, its
   * tokens go, and the request the jobs purge by is recorded, in one committed transaction (durable
   * before it is answered: SQLite commits with synchronous=FULL, PostgreSQL on commit). Its platform
   * user id, or null when there is no active account (never registered, or deleted already,
   * perhaps by a concurrent DELETE whose own request stands).
   */
  async deleteAccount(appId: string, orgUserId: string, now: Date): Promise<number | null> {
    return this.db.transaction(async (tx) => {
      const found = await tx.all('account_active', { app_id: appId, org_user_id: orgUserId });
      if (found.length === 0) return null;
      const userId = Number(found[0]?.['platform_user_id']);
      await tx.run('account_mark_deleted', { now: now.toISOString(), platform_user_id: userId, app_id: appId });
      await tx.run('tokens_of_user_delete', { platform_user_id: userId, app_id: appId });
      await recordDeletion(tx, { appId, platformUserId: userId, orgUserId, requestedAt: now.toISOString() });
      return userId;
    });
  }

  /** Platform user ids of the app's deleted accounts (the bulk export leaves their trips out). */
  async deletedUserIds(appId: string): Promise<number[]> {
    const rows = await this.db.all('accounts_deleted_of_app', { app_id: appId });
    return rows.map((r) => Number(r['platform_user_id']));
  }

  /** The app's drivers in transit between cells (src/cells/move-record.ts). */
  async movingDrivers(
    appId: string,
  ): Promise<Array<{ userId: number; from: string; to: string; arrivedVersion: number | null }>> {
    return (await this.db.all('driver_moves_of_app', { app_id: appId })).map((r) => ({
      userId: Number(r['platform_user_id']),
      from: String(r['from_cell']),
      to: String(r['to_cell']),
      arrivedVersion:
        r['arrived_version'] === null || r['arrived_version'] === undefined ? null : Number(r['arrived_version']),
    }));
  }

  /** Whether account `userId` of `appId` is marked deleted (false for an active or unknown one). */
  async isDeleted(appId: string, userId: number): Promise<boolean> {
    return (await this.db.all('account_is_deleted', { platform_user_id: userId, app_id: appId })).length > 0;
  }

  /** The store stays open for the process's other users (src/state/open.ts closes it). */
  close(): void {}
}

async function ensureIn(
  tx: StateQueries,
  appId: string,
  orgUserIds: string[],
  now: Date,
): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  for (const orgUserId of orgUserIds) {
    const found = await tx.all('account_active', { app_id: appId, org_user_id: orgUserId });
    if (found.length > 0) {
      result.set(orgUserId, Number(found[0]?.['platform_user_id']));
      continue;
    }
    const id = newPlatformUserId();
    await tx.run('account_insert', {
      platform_user_id: id,
      app_id: appId,
      org_user_id: orgUserId,
      created_at: now.toISOString(),
      deleted_at: null,
    });
    // the account's cell, given with it (docs/decisions.md, Cells); nothing without cells
    await assignIn(tx, appId, [id], now);
    result.set(orgUserId, id);
  }
  return result;
}
