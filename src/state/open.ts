import { resolve } from 'node:path';
import { sqliteFileOf, type StateDb, type StateLocation } from './db.js';
import { SqliteState } from './sqlite.js';
import { migrateDataDir } from './migrate.js';
import { migrateDeletionFiles } from './migrate-deletions.js';
import { flagOrSetting } from '../settings.js';
import { currentCell } from '../cell.js';

/** `--database-url`, else DATABASE_URL, else none (the data folder's SQLite file). */
export function resolveDatabaseUrl(flag?: string | null): string | null {
  return flagOrSetting(flag, 'DATABASE_URL');
}

const opened = new Map<string, Promise<StateDb>>();

const keyOf = (location: StateLocation): string => {
  const url = location.databaseUrl === undefined ? resolveDatabaseUrl() : location.databaseUrl;
  return url ? `postgres\u0000${url}\u0000${resolve(location.dataDir)}` : `sqlite\u0000${resolve(location.dataDir)}`;
};

/**
 * The state store of a data folder, opened once per process and shared by every caller in it
 * (a connection, or a pool, per store). The first open migrates the folder's apps.json,
 * passport.duckdb and deletion request files of earlier releases into it.
 */
export function openState(location: StateLocation): Promise<StateDb> {
  const key = keyOf(location);
  let state = opened.get(key);
  if (!state) {
    const url = location.databaseUrl === undefined ? resolveDatabaseUrl() : location.databaseUrl;
    state = (async () => {
      // pg is loaded only for a PostgreSQL store: every job and API process opens a store, most of
      // them SQLite, and loading pg would cost each of those CPU for nothing
      const db = url
        ? await (await import('./postgres.js')).PostgresState.open(url)
        : SqliteState.open(sqliteFileOf(location.dataDir));
      try {
        await migrateDataDir(db, location.dataDir);
        // after the accounts: a pending request is kept only when its account is marked deleted
        await migrateDeletionFiles(db, location.dataDir);
        // a cell's first job registers it: no command is needed to begin (docs/operating.md, Cells)
        const cell = currentCell();
        if (cell) await db.run('cell_register', { name: cell, now: new Date().toISOString() });
      } catch (error) {
        await db.close();
        throw error;
      }
      return db;
    })();
    opened.set(key, state);
    state.catch(() => opened.delete(key));
  }
  return state;
}

/** Closes every store this process opened (a job's last step; tests between workspaces). */
export async function closeStates(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => null))?.close()));
}
