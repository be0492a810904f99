import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { fsyncDir, writeFileAtomic } from '../fsutil.js';
import { silent, type Progress } from '../progress.js';
import { sqliteFileOf } from '../state/db.js';
import { copyLanding, copyTree, inProgress } from './files.js';
import {
  describeFile,
  FOLDERS,
  MANIFEST,
  OUTBOX,
  STATE_PG_DUMP,
  STATE_SQLITE,
  type BackupFile,
  type BackupManifest,
} from './manifest.js';
import { copyOutbox } from './outbox.js';
import { currentRelease } from './release.js';
import { copyWarehouse } from './warehouse.js';
import { backupPostgres, backupSqlite, pgBinOf } from './state-store.js';
import { queryFile } from '../db/sql.js';

export interface BackupOptions {
  dataDir: string;
  /** The backup folder: must not exist; it appears whole or not at all. */
  to: string;
  /** The PostgreSQL state store's URL, or null for the data folder's SQLite file. */
  databaseUrl: string | null;
  pgBin?: string | null;
  progress?: Progress;
}

export interface BackupResult {
  to: string;
  files: number;
  bytes: number;
  seconds: number;
  state: BackupManifest['state'];
  outbox: BackupManifest['outbox']['copied'];
  /** Files copied of each folder: landing (archive and waiting inputs), event files, deletion requests, warehouse (with its raw points). */
  counts: { landing: number; events: number; deletions: number; warehouse: number };
}

/**
 * Copies what cannot be recomputed while every process runs (docs/operating.md, Backup): the
 * state store, then the deletion requests and event files, then the outbox, then the warehouse
 * (waiting for a job that writes it: warehouse.ts), then the landing area. Each part is
 * consistent in itself; the order makes the seams harmless: a deletion request or event file
 * written after the state's copy is in the backup too (a restore then does what the running
 * service would have done), a file loaded after the warehouse's copy is in the archive's, an event file taken in during the copy is in the files and
 * the outbox, and the outbox's intake ignores ids it knows.
 */
export async function runBackup(options: BackupOptions): Promise<BackupResult> {
  const started = performance.now();
  const progress = options.progress ?? silent;
  const dataDir = resolve(options.dataDir);
  const to = resolve(options.to);
  if (!existsSync(dataDir)) throw new InputError(`--data-dir ${dataDir} does not exist`);
  if (!options.databaseUrl && !existsSync(sqliteFileOf(dataDir)))
    throw new InputError(
      `--data-dir ${dataDir} holds no state store (state/state.sqlite); with PostgreSQL give --database-url`,
    );
  if (existsSync(to)) throw new InputError(`--to ${to} exists: a backup goes into a new folder`);
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  // a backup that stops halfway leaves only this dot-folder, never a folder that looks whole
  const tmp = join(dirname(to), `.${basename(to)}.partial-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode: 0o700 });
  try {
    let state: BackupManifest['state'];
    mkdirSync(join(tmp, 'state'), { mode: 0o700 });
    if (options.databaseUrl) {
      const bin = pgBinOf(options.pgBin);
      progress(`backup: state store: pg_dump of ${redacted(options.databaseUrl)}`);
      state = {
        dialect: 'postgres',
        where: redacted(options.databaseUrl),
        version: await backupPostgres(options.databaseUrl, join(tmp, STATE_PG_DUMP), bin),
      };
    } else {
      progress(`backup: state store: SQLite online backup of ${sqliteFileOf(dataDir)}`);
      state = {
        dialect: 'sqlite',
        where: sqliteFileOf(dataDir),
        version: await backupSqlite(sqliteFileOf(dataDir), join(tmp, STATE_SQLITE)),
      };
    }
    const skip = (name: string) => inProgress(name);
    const deletions = copyTree(dataDir, tmp, FOLDERS.deletions, { skip });
    const events = copyTree(dataDir, tmp, FOLDERS.events, { skip });
    progress(
      `backup: ${deletions.length} deletion request(s), ${events.length} event file(s) waiting for the deliverer`,
    );
    mkdirSync(join(tmp, 'webhooks'), { mode: 0o700 });
    const outbox = await copyOutbox(dataDir, join(tmp, OUTBOX), options.databaseUrl ?? null);
    const outboxCopied = outbox !== 'none' && outbox !== 'in the state dump';
    progress(
      `backup: webhook outbox: ${outbox === 'none' ? 'none yet (the deliverer has not run)' : outbox === 'in the state dump' ? "in PostgreSQL: pg_dump's copy of the state store holds it" : `copied ${outbox}`}`,
    );
    // before the landing area: a file loaded after the warehouse's copy is then in the archive's
    const warehouseStarted = performance.now();
    const warehouse = await copyWarehouse(dataDir, tmp, progress);
    progress(
      `backup: warehouse: ${warehouse.length === 0 ? 'none yet (nothing was loaded)' : `${warehouse.length} file(s) copied while no job could write it (${((performance.now() - warehouseStarted) / 1000).toFixed(1)} s)`}`,
    );
    const landing = copyLanding(dataDir, tmp, FOLDERS.landing);
    progress(
      `backup: landing area: ${landing.length} file(s) (${landing.filter((f) => f.startsWith(`${FOLDERS.landing}/loaded/`)).length} archived)`,
    );
    const files: BackupFile[] = [];
    const listed = [
      state.dialect === 'sqlite' ? STATE_SQLITE : STATE_PG_DUMP,
      ...deletions,
      ...events,
      ...(outboxCopied ? [OUTBOX] : []),
      ...warehouse,
      ...landing,
    ];
    for (const f of listed) {
      files.push(await describeFile(tmp, f));
      fsyncDir(join(tmp, f));
    }
    const manifest: BackupManifest = {
      format: 1,
      createdAt: new Date().toISOString(),
      release: currentRelease(),
      dataDir,
      state,
      outbox: { copied: outbox, duckdb: outboxCopied ? await duckdbVersion() : null },
      files,
    };
    writeFileAtomic(join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(tmp, to);
    fsyncDir(dirname(to));
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    return {
      to,
      files: files.length,
      bytes,
      seconds: (performance.now() - started) / 1000,
      state,
      outbox,
      counts: {
        landing: landing.length,
        events: events.length,
        deletions: deletions.length,
        warehouse: warehouse.length,
      },
    };
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
}

/** A URL as the log may show it: without its password. */
export function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

async function duckdbVersion(): Promise<string> {
  const { openDatabase } = await import('../db/open.js');
  const db = await openDatabase(':memory:');
  try {
    const [row] = await queryFile(db.connection, 'ops/backup/duckdb_version');
    return `DuckDB ${String(row?.['v'])}`;
  } finally {
    db.close();
  }
}
