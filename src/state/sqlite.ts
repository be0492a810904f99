import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { SerialQueue } from '../db/serial.js';
import { pickParams, stateSql, type StateDb, type StateParams, type StateQueries, type StateRow } from './db.js';

/**
 * The embedded state store: one SQLite file in WAL mode that every process on the machine opens.
 * Writers take the file's write lock (BEGIN IMMEDIATE) and wait for each other up to
 * `busy_timeout`; readers never wait. `secure_delete` overwrites deleted rows with zeros, so a
 * purged account's token hashes leave no bytes behind in the file.
 */
export class SqliteState implements StateDb {
  readonly dialect = 'sqlite' as const;
  /** One write statement or transaction at a time on this process's writing connection. */
  private readonly queue = new SerialQueue();
  private readonly statements = new Map<string, Database.Statement>();
  private readonly reads = new Map<string, Database.Statement>();

  /**
   * `db` writes (and reads inside its transactions); `reader` answers reads outside them at once,
   * from the last commit, never waiting behind a write of this process or another (WAL).
   */
  private constructor(
    private readonly db: Database.Database,
    private readonly reader: Database.Database,
    readonly where: string,
  ) {}

  static open(file: string): SqliteState {
    const db = openWalFile(file, 10_000);
    // a commit is on disk before it is answered (a deletion's 200 included)
    db.pragma('synchronous = FULL');
    db.pragma('secure_delete = ON');
    db.pragma('foreign_keys = ON');
    db.exec(stateSql('sqlite', 'schema'));
    const reader = new Database(file, { readonly: true });
    reader.pragma('busy_timeout = 10000');
    return new SqliteState(db, reader, file);
  }

  private statement(name: string): Database.Statement {
    let statement = this.statements.get(name);
    if (!statement) {
      statement = this.db.prepare(stateSql('sqlite', name));
      this.statements.set(name, statement);
    }
    return statement;
  }

  private allNow(name: string, params: StateParams): StateRow[] {
    const statement = this.statement(name);
    const bound = pickParams(stateSql('sqlite', name), params);
    if (statement.reader) return statement.all(bound) as StateRow[];
    statement.run(bound);
    return [];
  }

  private runNow(name: string, params: StateParams): number {
    const statement = this.statement(name);
    return statement.run(pickParams(stateSql('sqlite', name), params)).changes;
  }

  async all(name: string, params: StateParams = {}): Promise<StateRow[]> {
    let statement = this.reads.get(name);
    if (!statement) {
      statement = this.reader.prepare(stateSql('sqlite', name));
      this.reads.set(name, statement);
    }
    return statement.all(pickParams(stateSql('sqlite', name), params)) as StateRow[];
  }

  run(name: string, params: StateParams = {}): Promise<number> {
    return this.queue.run(async () => this.runNow(name, params));
  }

  /** Runs a script of its own (VACUUM, pragmas): no parameters. */
  exec(sql: string): Promise<void> {
    return this.queue.run(async () => void this.db.exec(sql));
  }

  transaction<T>(fn: (tx: StateQueries) => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      // IMMEDIATE: the write lock at once, so two processes never both read and then both write.
      // Transaction control is the connection's, written here only for SQLite: better-sqlite3's
      // transaction() takes a synchronous function, and `fn` awaits
      this.db.exec('begin immediate');
      const tx: StateQueries = {
        all: async (name, params = {}) => this.allNow(name, params),
        run: async (name, params = {}) => this.runNow(name, params),
      };
      try {
        const result = await fn(tx);
        this.db.exec('commit');
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('rollback');
        throw error;
      }
    });
  }

  reclaim(): Promise<void> {
    return this.queue.run(async () => {
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      // a reader of another process held an old snapshot: its pages stay until the next purge
      if (result && result.busy !== 0)
        throw new Error(`state: the write-ahead log of ${this.where} could not be truncated (a reader held it)`);
    });
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
      if (this.db.open) this.db.close();
      if (this.reader.open) this.reader.close();
    });
  }
}

/**
 * A SQLite file in WAL mode, made readable by its owner only (folder 0700, file 0600; SQLite gives
 * its -wal and -shm files the database file's mode), waiting up to `busyMs` for another writer.
 */
export function openWalFile(file: string, busyMs: number): Database.Database {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  db.pragma(`busy_timeout = ${busyMs}`);
  try {
    // switching to WAL takes the file's exclusive lock, and SQLite answers SQLITE_BUSY at once,
    // without its busy handler, where waiting could deadlock (two processes starting on a new
    // file together, a migration beside it: seen once in a test run): tried again until busyMs
    retryWhileBusy(() => db.pragma('journal_mode = WAL'), busyMs);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** How long a busy SQLite call waits before it is tried again. */
const BUSY_RETRY_MS = 25;

/**
 * `work()`, tried again every BUSY_RETRY_MS while it throws SQLITE_BUSY (any of its extended
 * codes), for up to `ms`; any other error, or a busy one past `ms`, is thrown. Synchronous, as
 * better-sqlite3 is: the wait blocks this thread, which opening a store does anyway.
 */
export function retryWhileBusy<T>(work: () => T, ms: number, sleep: (ms: number) => void = sleepSync): T {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      sleep(BUSY_RETRY_MS);
    }
  }
}

const sleepSync = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
