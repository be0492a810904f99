import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { InputError } from '../errors.js';
import { setting } from '../settings.js';
import { sqlText } from '../db/sql.js';

const run = promisify(execFile);

/**
 * Copies the SQLite state store through SQLite's online backup API: pages are copied while API
 * workers keep writing (WAL); a write in between restarts the copy of what changed, so the
 * result is the store as of one commit. The reader never blocks a writer.
 */
export async function backupSqlite(file: string, target: string): Promise<string> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    await db.backup(target);
    return `SQLite ${(db.prepare(sqlText('ops/backup/sqlite_version')).get() as { v: string }).v}`;
  } finally {
    db.close();
  }
}

/**
 * Where pg_dump and pg_restore are: `--pg-bin`, else DRIVING_PG_BIN, else the first on PATH, else
 * Debian's PostgreSQL 15 folder. Their major version must be at least the server's.
 */
export function pgBinOf(flag?: string | null): string {
  const given = flag ?? setting('DRIVING_PG_BIN');
  if (given) {
    if (!existsSync(join(given, 'pg_dump'))) throw new InputError(`--pg-bin ${given}: no pg_dump there`);
    return given;
  }
  for (const dir of (process.env['PATH'] ?? '').split(delimiter))
    if (dir && existsSync(join(dir, 'pg_dump'))) return dir;
  const debian = '/usr/lib/postgresql/15/bin';
  if (existsSync(join(debian, 'pg_dump'))) return debian;
  throw new InputError('pg_dump not found: give --pg-bin DIR (or DRIVING_PG_BIN, or put it on PATH)');
}

/** pg_dump in its custom format: one consistent snapshot (a repeatable-read transaction) while writers go on. */
export async function backupPostgres(url: string, target: string, bin: string): Promise<string> {
  await run(
    join(bin, 'pg_dump'),
    ['--format=custom', '--no-owner', '--no-privileges', '--file', target, '--dbname', url],
    { maxBuffer: 16 * 2 ** 20 },
  );
  return (await run(join(bin, 'pg_dump'), ['--version'])).stdout.trim();
}

/** Restores a dump into a database that holds no table yet (refused otherwise: nothing is mixed). */
export async function restorePostgres(url: string, dump: string, bin: string): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const tables = Number((await client.query(sqlText('ops/backup/pg_table_count'))).rows[0]?.n ?? 0);
    if (tables > 0)
      throw new InputError(`--database-url: the database holds ${tables} table(s) already; restore needs an empty one`);
  } finally {
    await client.end();
  }
  await run(
    join(bin, 'pg_restore'),
    ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', '--dbname', url, dump],
    { maxBuffer: 16 * 2 ** 20 },
  );
  await forgetLeasesPostgres(url);
}

/**
 * A lease in the copy names a holder on the machine the backup came from: forgotten, so the
 * restored deliverer starts at once instead of standing by until it runs out.
 */
export function forgetLeasesSqlite(file: string): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.exec(sqlText('ops/backup/forget_leases'));
  } finally {
    db.close();
  }
}

async function forgetLeasesPostgres(url: string): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query(sqlText('ops/backup/forget_leases'));
  } finally {
    await client.end();
  }
}
