import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { SQL_DIR } from '../db/sql.js';

/** Values a state statement binds: text, numbers and null only, so both engines store them alike. */
export type StateParams = Record<string, string | number | null>;
export type StateRow = Record<string, unknown>;

/** Statements of the shared state store, by the name of their file under sql/ops/state/. */
export interface StateQueries {
  all(name: string, params?: StateParams): Promise<StateRow[]>;
  /** Runs a writing statement; the number of rows it changed. */
  run(name: string, params?: StateParams): Promise<number>;
}

/**
 * The state that every API process and job shares (docs/decisions.md, Storage and processes): apps, accounts, tokens, deletion requests, leases.
 * SQLite in the data folder by default; PostgreSQL when a database URL is given.
 */
export interface StateDb extends StateQueries {
  readonly dialect: 'sqlite' | 'postgres';
  /** Where it is, for the log (a URL without its password). */
  readonly where: string;
  /** Runs `fn` in one transaction that takes the write lock first: committed when it resolves. */
  transaction<T>(fn: (tx: StateQueries) => Promise<T>): Promise<T>;
  /**
   * Makes deleted rows unrecoverable from the store's files: SQLite (secure_delete already zeroes
   * freed cells) folds its write-ahead log back and truncates it, where old page images would
   * still hold them; PostgreSQL vacuums the dead row versions of accounts, tokens and deletion requests.
   */
  reclaim(): Promise<void>;
  close(): Promise<void>;
}

/** Where the state is: the data folder's SQLite file, or a PostgreSQL database. */
export interface StateLocation {
  dataDir: string;
  /** postgres://...; default: DATABASE_URL of the environment, else SQLite. */
  databaseUrl?: string | null;
}

export const sqliteFileOf = (dataDir: string): string => join(dataDir, 'state', 'state.sqlite');

/** The dialect's own file when there is one (sql/ops/state/<dialect>/NAME.sql), else the common one. */
const texts = new Map<string, string>();
export function stateSql(dialect: 'sqlite' | 'postgres', name: string): string {
  const key = `${dialect}/${name}`;
  let text = texts.get(key);
  if (text === undefined) {
    try {
      text = readFileSync(join(SQL_DIR, 'ops', 'state', dialect, `${name}.sql`), 'utf8');
    } catch {
      text = readFileSync(join(SQL_DIR, 'ops', 'state', `${name}.sql`), 'utf8');
    }
    texts.set(key, text);
  }
  return text;
}

/** The `$name` parameters of a statement, in order of first use (state SQL holds no `$` in strings). */
export function namedParameters(sql: string): string[] {
  const withoutComments = sql.replace(/--[^\n]*/g, '');
  return [...new Set([...withoutComments.matchAll(/\$([a-z_][a-z0-9_]*)/gi)].map((m) => m[1] as string))];
}

/** Only the named parameters, each required: a missing one is a bug, never a silent null. */
export function pickParams(sql: string, params: StateParams): StateParams {
  const used: StateParams = {};
  for (const name of namedParameters(sql)) {
    if (!(name in params)) throw new Error(`state SQL parameter $${name} has no value`);
    used[name] = params[name] as string | number | null;
  }
  return used;
}

export const dataDirOfAppsFile = (appsFile: string): string => dirname(appsFile);
