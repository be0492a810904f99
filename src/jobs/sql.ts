import { openDatabase } from '../db/open.js';
import { query, type Params } from '../db/sql.js';
import { readFileSync } from 'node:fs';
import { attachParquetExport } from '../analyst/parquet-views.js';
import { InputError } from '../errors.js';

export interface SqlOptions {
  parquet: string;
  file: string;
  params: string[];
}

/**
 * Runs a model from sql/ (or any SELECT file) on a Parquet export, with `--param name=value`
 * bound as `$name`. The same files the jobs run, so the numbers match the warehouse.
 */
export async function runSqlOnExport(options: SqlOptions): Promise<Record<string, unknown>[]> {
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
  const db = await openDatabase(':memory:');
  try {
    await attachParquetExport(db.connection, options.parquet);
    return await query(db.connection, text, params);
  } finally {
    db.close();
  }
}
