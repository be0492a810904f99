import { openDatabase } from '../db/open.js';
import { parameterNames, query, sqlText, type Params } from '../db/sql.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readFileSync } from 'node:fs';
import { pathsFor, resolveDataDir } from '../data-folder.js';
import { attachParquetExport } from '../analyst/parquet-views.js';
import { InputError } from '../errors.js';
import { conversionHint } from '../analyst/param-conversion.js';

export interface SqlOptions {
  /**
   * The export folder, or several: cells' exports (export.js --cell) read as one dataset; default:
   * the data folder's own, where export.js writes by default.
   */
  parquet?: string | readonly string[];
  dataDir?: string;
  file: string;
  params: string[];
}

export interface SqlResult {
  rows: Record<string, unknown>[];
  /** Parameters that match nothing in the export (an app or user id from elsewhere), said plainly. */
  notes: string[];
}

/**
 * Runs a model from sql/ (or any SELECT file) on a Parquet export, with `--param name=value`
 * bound as `$name`. The same files the jobs run, so the numbers match the warehouse.
 */
export async function runSqlOnExport(options: SqlOptions): Promise<SqlResult> {
  const params: Params = {};
  for (const pair of options.params) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new InputError(`--param must look like name=value, got '${pair}'`);
    params[pair.slice(0, at)] = pair.slice(at + 1);
  }
  let text: string;
  try {
    text = readFileSync(options.file, 'utf8');
  } catch {
    throw new InputError(`--file ${options.file}: cannot read it`);
  }
  // a missing value is a usage error, said before DuckDB would say it in its own words
  const needed = parameterNames(text);
  const missing = needed.filter((name) => !(name in params));
  if (missing.length > 0)
    throw new InputError(`${options.file} needs ${missing.map((m) => `--param ${m}=...`).join(' ')}`);
  const unused = Object.keys(params).filter((name) => !needed.includes(name));
  if (unused.length > 0)
    throw new InputError(
      `${options.file} has no parameter ${unused.map((u) => `$${u}`).join(', ')} (it takes: ${needed.map((n) => `$${n}`).join(', ') || 'none'})`,
    );
  const given = typeof options.parquet === 'string' ? [options.parquet] : (options.parquet ?? []);
  const parquet = given.length > 0 ? given : [pathsFor(options.dataDir ?? resolveDataDir()).exportsDir];
  if (given.length === 0 && !existsSync(parquet[0] as string)) {
    throw new InputError(
      `no export at ${parquet[0]}: write one with node jobs/export.js (a purge of a deleted account removes it), or give --parquet DIR`,
    );
  }
  const db = await openDatabase(':memory:');
  try {
    await attachParquetExport(db.connection, parquet);
    const notes = await unmatched(db.connection, params);
    let rows: Record<string, unknown>[];
    try {
      rows = await query(db.connection, text, params);
    } catch (error) {
      // the file and the values are the caller's: a file that does not bind or a value that does
      // not cast is bad input, said in DuckDB's first line
      const message = error instanceof Error ? error.message : String(error);
      const first = message.split('\n')[0] ?? message;
      const hint = conversionHint(text, params as Record<string, string>, first);
      throw new InputError(`${options.file}: ${first}${hint ? `: ${hint}` : ''}`);
    }
    return { rows, notes };
  } finally {
    db.close();
  }
}

/**
 * An `app_id` or `user_id` that is not in the export still gives rows (periods of zeros, no
 * scores), which looks like an answer: say so, with ids that are there.
 */
async function unmatched(conn: DuckDBConnection, params: Params): Promise<string[]> {
  const notes: string[] = [];
  const appId = typeof params['app_id'] === 'string' ? params['app_id'] : undefined;
  if (appId !== undefined) {
    const [row] = await query(conn, sqlText('analyses/param_app_matches'), { app_id: appId });
    if (Number(row?.['matches']) === 0)
      notes.push(`app_id=${appId} matches no app in this export (apps: ${String(row?.['known'] ?? 'none')})`);
  }
  const userId = typeof params['user_id'] === 'string' ? params['user_id'] : undefined;
  if (userId !== undefined) {
    const [row] = await query(conn, sqlText('analyses/param_user_matches'), { app_id: appId ?? '', user_id: userId });
    if (Number(row?.['matches']) === 0) {
      notes.push(
        `user_id=${userId} has no trips${appId !== undefined ? ` in app ${appId}` : ''} in this export (user_id is the platform id; some that do: ${String(row?.['examples'] ?? 'none')}; all: sql/analyses/users.sql)`,
      );
    }
  }
  return notes;
}
