import pg from 'pg';
import { poolWithSchema } from './pg-schema.js';
import { inPgTransaction } from './pg-transaction.js';
import {
  namedParameters,
  pickParams,
  stateSql,
  type StateDb,
  type StateParams,
  type StateQueries,
  type StateRow,
} from './db.js';

/** Lock id (pg_advisory_xact_lock) that orders schema creation, migration and app changes. */
export const STATE_LOCK_ID = 72_657_001;

// bigint columns (platform user ids, epoch milliseconds) are below 2^53: numbers, not strings
pg.types.setTypeParser(20, (value: string) => Number(value));

/**
 * The state store on PostgreSQL, for API processes on several machines. Statements are the same
 * `$name` files as SQLite's (a dialect's own file where they differ), sent with positional
 * parameters; every transaction takes one advisory lock first, as SQLite's BEGIN IMMEDIATE takes
 * the write lock, so the two stores behave alike.
 */
export class PostgresState implements StateDb {
  readonly dialect = 'postgres' as const;

  private constructor(
    private readonly pool: pg.Pool,
    readonly where: string,
  ) {}

  static async open(url: string): Promise<PostgresState> {
    // idle connections do not keep a finished job alive
    const pool = await poolWithSchema(
      { connectionString: url, max: 8, idleTimeoutMillis: 5_000, allowExitOnIdle: true },
      STATE_LOCK_ID,
      stateSql('postgres', 'schema'),
    );
    const shown = new URL(url);
    if (shown.password) shown.password = '***';
    return new PostgresState(pool, shown.toString());
  }

  private static async exec(
    client: pg.Pool | pg.PoolClient,
    name: string,
    params: StateParams,
  ): Promise<pg.QueryResult> {
    const text = stateSql('postgres', name);
    const names = namedParameters(text);
    const bound = pickParams(text, params);
    const positional = text
      .replace(/--[^\n]*/g, '')
      .replace(/\$([a-z_][a-z0-9_]*)/gi, (_, n: string) => `$${names.indexOf(n) + 1}`);
    return client.query(
      positional,
      names.map((n) => bound[n]),
    );
  }

  async all(name: string, params: StateParams = {}): Promise<StateRow[]> {
    return (await PostgresState.exec(this.pool, name, params)).rows as StateRow[];
  }

  async run(name: string, params: StateParams = {}): Promise<number> {
    return (await PostgresState.exec(this.pool, name, params)).rowCount ?? 0;
  }

  async transaction<T>(fn: (tx: StateQueries) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      const tx: StateQueries = {
        all: async (name, params = {}) => (await PostgresState.exec(client, name, params)).rows as StateRow[],
        run: async (name, params = {}) => (await PostgresState.exec(client, name, params)).rowCount ?? 0,
      };
      return await inPgTransaction(client, () => fn(tx), STATE_LOCK_ID);
    } finally {
      client.release();
    }
  }

  async reclaim(): Promise<void> {
    // outside a transaction, as VACUUM must be
    await this.pool.query('vacuum accounts, tokens, deletion_requests');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
