import { randomBytes } from 'node:crypto';
import { listValue } from '@duckdb/node-api';
import { openDatabase, type Database } from '../db/open.js';
import { query, run, runScript } from '../db/sql.js';
import { inTransaction } from '../warehouse/warehouse.js';

/** Platform user ids: random (not sequential, so they reveal nothing), positive, below 2^53. */
export function newPlatformUserId(): number {
  const value = randomBytes(8).readBigUInt64BE() % (2n ** 53n - 1n);
  return Number(value + 1n);
}

/**
 * Accounts and tokens (decisions 8). The API process owns this file; the demo's generator opens it
 * only when the API is not running (DuckDB would refuse the second writer anyway).
 */
export class PassportStore {
  private constructor(private readonly db: Database) {}

  static async open(file: string): Promise<PassportStore> {
    const db = await openDatabase(file, { lockWaitMs: 2_000 });
    await runScript(db.connection, 'passport/schema');
    return new PassportStore(db);
  }

  /** The active account of each user, creating the missing ones. */
  async ensureAccounts(appId: string, orgUserIds: string[], now = new Date()): Promise<Map<string, number>> {
    const conn = this.db.connection;
    const result = new Map<string, number>();
    await inTransaction(conn, async () => {
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
    return result;
  }

  close(): void {
    this.db.close();
  }
}
