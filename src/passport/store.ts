import { randomBytes } from 'node:crypto';
import { listValue } from '../db/duckdb.js';
import { openDatabase, type Database } from '../db/open.js';
import { query, queryFile, run, runScript } from '../db/sql.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { hashSecret, newSecret } from '../secrets.js';
import { SerialQueue } from '../db/serial.js';
import { TokenIndex } from './token-index.js';

/** Platform user ids: random (not sequential, so they reveal nothing), positive, below 2^53. */
export function newPlatformUserId(): number {
  const value = randomBytes(8).readBigUInt64BE() % (2n ** 53n - 1n);
  return Number(value + 1n);
}

/**
 * Accounts and tokens (docs/decisions.md, Deletion). The API process owns this file; the demo's generator opens it
 * only when the API is not running (DuckDB would refuse the second writer anyway).
 */
export class PassportStore {
  private readonly queue = new SerialQueue();
  /** Active accounts by app and org user id; exact because this process is the only writer. */
  private readonly active = new Map<string, number | null>();
  /** Valid tokens by hash; exact for the same reason, so token checks never wait in the queue. */
  private readonly tokens = new TokenIndex();

  private constructor(private readonly db: Database) {}

  static async open(file: string): Promise<PassportStore> {
    const db = await openDatabase(file, { lockWaitMs: 2_000 });
    await runScript(db.connection, 'passport/schema');
    return new PassportStore(db);
  }

  /** The active account of each user, creating the missing ones. */
  ensureAccounts(appId: string, orgUserIds: string[], now = new Date()): Promise<Map<string, number>> {
    return this.queue.run(() => this.ensureAccountsNow(appId, orgUserIds, now, true));
  }

  private async ensureAccountsNow(appId: string, orgUserIds: string[], now: Date, ownTransaction: boolean): Promise<Map<string, number>> {
    const conn = this.db.connection;
    const result = new Map<string, number>();
    const inTx = ownTransaction ? (fn: () => Promise<void>) => inTransaction(conn, fn) : (fn: () => Promise<void>) => fn();
    await inTx(async () => {
      const existing = await query(
        conn,
        'select org_user_id, platform_user_id from accounts where app_id = $app_id and deleted_at is null and list_contains($ids, org_user_id)',
        { app_id: appId, ids: listValue(orgUserIds) },
      );
      for (const row of existing) result.set(String(row['org_user_id']), Number(row['platform_user_id']));
      for (const orgUserId of orgUserIds) {
        if (result.has(orgUserId)) continue;
        const id = newPlatformUserId();
        await run(conn, 'insert into accounts values ($id, $app_id, $org_user_id, $now, null)', {
          id, app_id: appId, org_user_id: orgUserId, now: now.toISOString(),
        });
        result.set(orgUserId, id);
      }
    });
    for (const [orgUserId, id] of result) this.active.set(cacheKey(appId, orgUserId), id);
    return result;
  }

  /** The active account's platform user id, or null (never registered, or deleted). */
  async activeAccount(appId: string, orgUserId: string): Promise<number | null> {
    const key = cacheKey(appId, orgUserId);
    const cached = this.active.get(key);
    if (cached !== undefined) return cached;
    const found = await this.queue.run(() => this.lookupAccount(appId, orgUserId));
    // only hits are cached: caching misses would let any caller grow the map with made-up ids
    if (found !== null) {
      if (this.active.size >= 1_000_000) this.active.clear();
      this.active.set(key, found);
    }
    return found;
  }

  /**
   * Loads active accounts into the cache (up to the cache's 1,000,000), so the first request for
   * each user does not wait in the store's one-at-a-time queue: measured on 37,500 users, a cold
   * cache held the trip list at 718 req/s with a 5 s p50 for the first minute after a start.
   */
  async warmAccounts(limit = 1_000_000): Promise<number> {
    const rows = await this.queue.run(() =>
      query(this.db.connection, 'select app_id, org_user_id, platform_user_id from accounts where deleted_at is null limit $limit', { limit }),
    );
    for (const r of rows) this.active.set(cacheKey(String(r['app_id']), String(r['org_user_id'])), Number(r['platform_user_id']));
    return rows.length;
  }

  /**
   * Loads every token that resolves now into the in-memory index: token checks are answered from
   * it alone. The store must be warmed before it serves (createApi does).
   */
  async warmTokens(now: Date): Promise<number> {
    const rows = await this.queue.run(() => queryFile(this.db.connection, 'passport/active_tokens', { now: now.toISOString() }));
    for (const r of rows) {
      this.tokens.add(String(r['token_hash']), {
        appId: String(r['app_id']), platformUserId: Number(r['platform_user_id']), orgUserId: String(r['org_user_id']), expiresMs: Number(r['expires_ms']),
      });
    }
    return rows.length;
  }

  /** Forgets expired tokens (memory only: an expired token never resolves anyway). */
  sweepTokens(now: Date): number {
    return this.tokens.sweep(now.getTime());
  }

  get indexedTokens(): number {
    return this.tokens.size;
  }

  private async lookupAccount(appId: string, orgUserId: string): Promise<number | null> {
    const rows = await query(
      this.db.connection,
      'select platform_user_id from accounts where org_user_id = $org and app_id = $app and deleted_at is null',
      { org: orgUserId, app: appId },
    );
    return rows.length > 0 ? Number(rows[0]?.['platform_user_id']) : null;
  }

  /**
   * the token issue: the active account (created when there is none) gets a new token valid for
   * `validMs`. Only the token's hash is stored.
   */
  issueToken(appId: string, orgUserId: string, now: Date, validMs: number): Promise<{ token: string; platformUserId: number }> {
    return this.queue.run(() => this.issueTokenNow(appId, orgUserId, now, validMs));
  }

  private async issueTokenNow(appId: string, orgUserId: string, now: Date, validMs: number): Promise<{ token: string; platformUserId: number }> {
    const token = newSecret('pt_');
    const hash = hashSecret(token);
    const expiresMs = now.getTime() + validMs;
    let platformUserId = 0;
    await inTransaction(this.db.connection, async () => {
      platformUserId = (await this.ensureAccountsNow(appId, [orgUserId], now, false)).get(orgUserId) as number;
      await run(this.db.connection, 'insert into tokens values ($hash, $app, $user, $now, $expires)', {
        hash, app: appId, user: platformUserId, now: now.toISOString(), expires: new Date(expiresMs).toISOString(),
      });
    });
    // indexed only once committed: a token is never answered that the store does not hold
    this.tokens.add(hash, { appId, platformUserId, orgUserId, expiresMs });
    return { token, platformUserId };
  }

  /**
   * the token lookup: the holder of a valid token of this app, or null (unknown, expired, revoked, or
   * another app's). From the index: no query, no wait.
   */
  tokenHolder(appId: string, token: string, now: Date): { platformUserId: number; orgUserId: string } | null {
    const holder = this.tokens.get(hashSecret(token), now.getTime());
    return holder && holder.appId === appId ? { platformUserId: holder.platformUserId, orgUserId: holder.orgUserId } : null;
  }

  /** The app and holder of a valid token, whichever app issued it (the SDK presents only the token). */
  tokenOwner(token: string, now: Date): { appId: string; platformUserId: number; orgUserId: string } | null {
    const holder = this.tokens.get(hashSecret(token), now.getTime());
    return holder ? { appId: holder.appId, platformUserId: holder.platformUserId, orgUserId: holder.orgUserId } : null;
  }

  /**
   * Marks account `userId` (the active one of `orgUserId`) deleted: its tokens stop resolving at
   * once (they join on an active account). False when it is no longer the active account.
   */
  async markDeleted(appId: string, orgUserId: string, userId: number, now: Date): Promise<boolean> {
    return this.queue.run(async () => {
      const marked = await query(
        this.db.connection,
        'update accounts set deleted_at = $now where platform_user_id = $id and app_id = $app and deleted_at is null returning platform_user_id',
        { now: now.toISOString(), id: userId, app: appId },
      );
      this.active.delete(cacheKey(appId, orgUserId));
      // its tokens stop at once, as the store's join on an active account says
      if (marked.length > 0) this.tokens.forgetUser(userId);
      return marked.length > 0;
    });
  }

  /** Platform user ids of the app's deleted accounts (the bulk export leaves their trips out). */
  async deletedUserIds(appId: string): Promise<number[]> {
    const rows = await this.queue.run(() => query(this.db.connection, 'select platform_user_id from accounts where app_id = $app and deleted_at is not null', { app: appId }));
    return rows.map((r) => Number(r['platform_user_id']));
  }

  /** Whether account `userId` of `appId` is marked deleted (false for an active or unknown one). */
  async isDeleted(appId: string, userId: number): Promise<boolean> {
    const rows = await this.queue.run(() => query(
      this.db.connection,
      'select 1 from accounts where platform_user_id = $id and app_id = $app and deleted_at is not null',
      { id: userId, app: appId },
    ));
    return rows.length > 0;
  }

  close(): void {
    this.db.close();
  }
}

const cacheKey = (appId: string, orgUserId: string): string => `${appId}\u0000${orgUserId}`;
