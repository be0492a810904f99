import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { pathsFor } from '../data-folder.js';
import { openDatabase } from '../db/open.js';
import { queryFile } from '../db/sql.js';
import type { StateDb, StateQueries } from './db.js';

/** The state_meta row that says the data folder's files of an earlier release were taken in. */
const MIGRATED = 'migrated_files';

export interface Migration {
  apps: number;
  accounts: number;
  tokens: number;
}

/**
 * Takes a data folder of an earlier release (apps.json, passport/passport.duckdb) into the state
 * store, once: inside the store's write transaction, so of many processes starting together one
 * migrates and the others find it done. Afterwards apps.json is kept as apps.json.migrated (no
 * personal data; a way back) and passport.duckdb is removed, since it holds account and token data
 * that a purge would no longer reach.
 */
export async function migrateDataDir(
  db: StateDb,
  dataDir: string,
  log = (line: string) => void process.stderr.write(`${line}\n`),
): Promise<Migration | null> {
  const paths = pathsFor(dataDir);
  const found = existsSync(paths.appsFile) || existsSync(paths.passportFile);
  if (!found) return null;
  const done = await db.transaction(async (tx) => {
    if ((await tx.all('meta_get', { name: MIGRATED })).length > 0) return null;
    const counts = await copyFiles(tx, paths.appsFile, paths.passportFile);
    await tx.run('meta_set', {
      name: MIGRATED,
      value: JSON.stringify({ ...counts, from: dataDir, at: new Date().toISOString() }),
    });
    await tx.run('apps_bump');
    return counts;
  });
  if (done) {
    log(
      `state: migrated ${done.apps} apps, ${done.accounts} accounts and ${done.tokens} tokens from ${dataDir} (apps.json, passport.duckdb) into ${db.where}`,
    );
  }
  // also when another process migrated and died before putting the files away
  try {
    renameSync(paths.appsFile, `${paths.appsFile}.migrated`);
  } catch (error) {
    // another process starting at the same time put it away first
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  for (const file of [paths.passportFile, `${paths.passportFile}.wal`]) rmSync(file, { force: true });
  return done;
}

async function copyFiles(tx: StateQueries, appsFile: string, passportFile: string): Promise<Migration> {
  const counts: Migration = { apps: 0, accounts: 0, tokens: 0 };
  if (existsSync(appsFile)) {
    const file = JSON.parse(readFileSync(appsFile, 'utf8')) as { apps: { appId: string; createdAt: string }[] };
    for (const app of file.apps) {
      await tx.run('app_upsert', { app_id: app.appId, created_at: app.createdAt, doc: JSON.stringify(app) });
      counts.apps++;
    }
  }
  if (existsSync(passportFile)) {
    const duck = await openDatabase(passportFile, { readOnly: true, lockWaitMs: 10_000 });
    try {
      for (const r of await queryFile(duck.connection, 'ops/passport/export_accounts')) {
        counts.accounts += await tx.run('account_insert', {
          platform_user_id: Number(r['platform_user_id']),
          app_id: String(r['app_id']),
          org_user_id: String(r['org_user_id']),
          created_at: String(r['created_at']),
          deleted_at: r['deleted_at'] === null ? null : String(r['deleted_at']),
        });
      }
      for (const r of await queryFile(duck.connection, 'ops/passport/export_tokens')) {
        counts.tokens += await tx.run('token_insert', {
          token_hash: String(r['token_hash']),
          app_id: String(r['app_id']),
          platform_user_id: Number(r['platform_user_id']),
          issued_at: String(r['issued_at']),
          expires_ms: Number(r['expires_ms']),
        });
      }
    } finally {
      duck.close();
    }
  }
  return counts;
}
