import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { silent, type Progress } from '../progress.js';
import { sqliteFileOf } from '../state/db.js';
import { membersAsFiles } from '../load/archive-expand.js';
import type { LoadTotals } from '../load/report.js';
import { copyOne } from './files.js';
import { FOLDERS, STATE_PG_DUMP, STATE_SQLITE, verifiedManifest, type BackupManifest } from './manifest.js';
import { forgetLeasesSqlite, pgBinOf, restorePostgres } from './state-store.js';
import { redacted } from './backup.js';
import { WAREHOUSE_FILE } from './warehouse.js';

export interface RestoreOptions {
  from: string;
  /** The new data folder: absent or empty. */
  dataDir: string;
  /** PostgreSQL to restore a PostgreSQL backup into (an empty database); null for SQLite backups. */
  databaseUrl: string | null;
  pgBin?: string | null;
  /**
   * Rebuilds the warehouse and the published snapshot from the landing archive afterwards; null: lay
   * the files down only. The job passes its load in, so that the restore depends on no job.
   */
  load: LoadArchived | null;
  progress?: Progress;
}

/** Loads these files (in this order) into the data folder's warehouse and publishes. */
export type LoadArchived = (dataDir: string, files: string[], progress: Progress) => Promise<LoadTotals>;

export interface RestoreResult {
  dataDir: string;
  backupOf: string;
  createdAt: string;
  files: number;
  state: string;
  /** Archived landing files, in the order they are loaded again. */
  archived: number;
  /** The warehouse came with the backup (the load then takes only the archived files it lacks). */
  warehouse: boolean;
  load: LoadTotals | null;
  seconds: number;
}

/**
 * Lays a verified backup down in a new data folder (docs/operating.md, Restore): the state store
 * (SQLite file, or into an empty PostgreSQL database), the outbox, the event files, the deletion
 * requests, the warehouse with its raw points, and the landing area; with `load`, a load of the
 * archived files in the order they were first loaded then derives what the warehouse lacks
 * (everything, from a backup without one) and publishes the snapshot.
 */
export async function runRestore(options: RestoreOptions): Promise<RestoreResult> {
  const started = performance.now();
  const progress = options.progress ?? silent;
  const from = resolve(options.from);
  const dataDir = resolve(options.dataDir);
  const manifest = await verifiedManifest(from, progress);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0)
    throw new InputError(`--data-dir ${dataDir} is not empty: a restore goes into a new (or empty) folder`);
  const state = await stateTarget(manifest, options);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (state.dialect === 'sqlite') {
    mkdirSync(dirname(sqliteFileOf(dataDir)), { recursive: true, mode: 0o700 });
    copyFileSync(join(from, STATE_SQLITE), sqliteFileOf(dataDir));
    forgetLeasesSqlite(sqliteFileOf(dataDir));
  } else {
    await restorePostgres(state.url, join(from, STATE_PG_DUMP), pgBinOf(options.pgBin));
  }
  progress(
    `restore: state store restored into ${state.dialect === 'sqlite' ? sqliteFileOf(dataDir) : redacted(state.url)}`,
  );
  const rest = manifest.files.filter((f) => !f.path.startsWith('state/'));
  for (const f of rest) {
    if (!copyOne(join(from, f.path), join(dataDir, f.path)))
      throw new InputError(`--from ${from}: ${f.path} disappeared while it was restored`);
  }
  const archived = loadOrder(rest.map((f) => f.path)).map((p) => join(dataDir, p));
  const warehouse = rest.some((f) => f.path === WAREHOUSE_FILE);
  progress(
    `restore: ${rest.length} file(s) laid down (${warehouse ? 'the warehouse, ' : ''}${archived.length} archived landing file(s))`,
  );
  let load: LoadTotals | null = null;
  // with the warehouse, the load leaves out each archived file it already holds (by content) and
  // publishes; trips older than the archive's retention are in the warehouse alone
  if (options.load && (archived.length > 0 || warehouse)) {
    progress(
      `restore: loading the ${archived.length} archived file(s)${warehouse ? ' the warehouse does not hold yet' : ' again'}, in their first load's order, then publishing`,
    );
    // a merged day file of the archive is loaded as the files it holds (src/load/archive-expand.ts)
    const inputs = await membersAsFiles(archived, join(dataDir, 'landing', '.members', 'restore'));
    try {
      load = await options.load(dataDir, inputs.files, progress);
    } finally {
      inputs.done();
    }
  }
  return {
    dataDir,
    backupOf: manifest.dataDir,
    createdAt: manifest.createdAt,
    files: manifest.files.length,
    state: state.dialect === 'sqlite' ? sqliteFileOf(dataDir) : redacted(state.url),
    archived: archived.length,
    warehouse,
    load,
    seconds: (performance.now() - started) / 1000,
  };
}

type StateTarget = { dialect: 'sqlite' } | { dialect: 'postgres'; url: string };

async function stateTarget(manifest: BackupManifest, options: RestoreOptions): Promise<StateTarget> {
  if (manifest.state.dialect === 'sqlite') {
    if (options.databaseUrl)
      throw new InputError(
        '--database-url: this backup holds a SQLite state store; it is restored into the data folder (leave DATABASE_URL unset)',
      );
    return { dialect: 'sqlite' };
  }
  if (!options.databaseUrl)
    throw new InputError(
      '--database-url is needed: this backup holds a PostgreSQL state store (give an empty database)',
    );
  return { dialect: 'postgres', url: options.databaseUrl };
}

/**
 * The archived files (`landing/loaded/<day>/<name>`) in the order a load archived them: by day,
 * then the first of a name before its later namesakes (`<ms>-<name>`, by their time), then by
 * name, as one load takes its files.
 */
export function loadOrder(paths: string[]): string[] {
  const prefix = `${FOLDERS.landing}/loaded/`;
  const key = (p: string) => {
    const [day = '', name = ''] = p.slice(prefix.length).split('/');
    const again = /^(\d{13})-(.+)$/.exec(name);
    return { day, ms: again ? Number(again[1]) : 0, name: again ? (again[2] as string) : name };
  };
  return paths
    .filter((p) => p.startsWith(prefix) && p.slice(prefix.length).split('/').length === 2 && !p.endsWith('.reason.txt'))
    .map((p) => ({ p, k: key(p) }))
    .sort((a, b) => a.k.day.localeCompare(b.k.day) || a.k.ms - b.k.ms || a.k.name.localeCompare(b.k.name))
    .map((x) => x.p);
}
