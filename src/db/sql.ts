import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../paths.js';

export type Params = Record<string, DuckDBValue>;
export type Row = Record<string, unknown>;

/** The repository's sql/ folder. */
export const SQL_DIR = repoPath('sql') + '/';

const cache = new Map<string, string>();

/** Reads `sql/<name>.sql` once. Names are repository-relative, e.g. `marts/safety_scores`. */
export function sqlText(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(join(SQL_DIR, `${name}.sql`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** The `$name` parameters a statement names, in order of first use (comments and quotes ignored). */
export function parameterNames(sql: string): string[] {
  return [...new Set([...outsideQuotes(stripComments(sql)).matchAll(/\$([a-z_][a-z0-9_]*)/gi)].map((m) => m[1] as string))];
}

/** Binds only the parameters a statement names, so one params object can serve many files. */
export function paramsFor(sql: string, params: Params = {}): Params | undefined {
  const used: Params = {};
  let any = false;
  for (const match of outsideQuotes(sql).matchAll(/\$([a-z_][a-z0-9_]*)/gi)) {
    const key = match[1] as string;
    if (!(key in params)) throw new Error(`SQL parameter $${key} has no value`);
    used[key] = params[key] as DuckDBValue;
    any = true;
  }
  return any ? used : undefined;
}

/** With DRIVING_SQL_TRACE set, each statement's time goes to stderr (to find the slow or the failing one). */
export const TRACE = Boolean(process.env['DRIVING_SQL_TRACE']);

async function traced<T>(text: string, work: () => Promise<T>): Promise<T> {
  if (!TRACE) return work();
  const started = performance.now();
  const what = text.replace(/\s+/g, ' ').trim().slice(0, 100);
  try {
    const result = await work();
    process.stderr.write(`sql ${((performance.now() - started) / 1000).toFixed(3)} s: ${what}\n`);
    return result;
  } catch (error) {
    process.stderr.write(`sql FAILED after ${((performance.now() - started) / 1000).toFixed(3)} s: ${what}\n`);
    throw error;
  }
}

/** Runs one statement with bound parameters and returns JSON-safe row objects. */
export async function query(conn: DuckDBConnection, sql: string, params?: Params): Promise<Row[]> {
  const text = stripComments(sql);
  const reader = await traced(text, () => conn.runAndReadAll(text, paramsFor(text, params)));
  return reader.getRowObjectsJson() as Row[];
}

/** Runs one statement for its effect. */
export async function run(conn: DuckDBConnection, sql: string, params?: Params): Promise<void> {
  const text = stripComments(sql);
  await traced(text, () => conn.run(text, paramsFor(text, params)));
}

/** Runs `sql/<name>.sql` and returns its rows. */
export async function queryFile(conn: DuckDBConnection, name: string, params?: Params): Promise<Row[]> {
  return query(conn, sqlText(name), params);
}

/** Runs `sql/<name>.sql` for its effect. */
export async function runFile(conn: DuckDBConnection, name: string, params?: Params): Promise<void> {
  await run(conn, sqlText(name), params);
}

/**
 * Materialises a model (a file holding one SELECT) as a temp table named after it.
 * The model file stays a plain query, so analysts can run it unchanged on Parquet exports.
 */
export async function materialize(
  conn: DuckDBConnection,
  name: string,
  params?: Params,
  table = name.split('/').pop() as string,
): Promise<void> {
  await run(conn, `create or replace temp table ${quoteIdent(table)} as\n${sqlText(name)}`, params);
}

/** Runs a file of several statements separated by semicolons, binding what each one names. */
export async function runScript(conn: DuckDBConnection, name: string, params?: Params): Promise<void> {
  for (const statement of splitStatements(sqlText(name))) await traced(statement, () => conn.run(statement, paramsFor(statement, params)));
}

/** Runs a file of several statements and returns the rows of the last one (a SELECT). */
export async function queryScript(conn: DuckDBConnection, name: string, params?: Params): Promise<Row[]> {
  const statements = splitStatements(sqlText(name));
  const last = statements.pop();
  if (last === undefined) return [];
  for (const statement of statements) await conn.run(statement, paramsFor(statement, params));
  return query(conn, last, params);
}

export function splitStatements(text: string): string[] {
  return stripComments(text)
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Drops `--` line comments (so a `$word` in a comment is never taken for a parameter), leaving
 * quoted text alone: a path such as '/tmp/a--b' stays whole.
 */
export function stripComments(sql: string): string {
  let out = '';
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i] as string;
    if (ch === "'" || ch === '"') {
      const end = closingQuote(sql, i);
      out += sql.slice(i, end + 1);
      i = end;
    } else if (ch === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
      out += '\n';
    } else out += ch;
  }
  return out;
}

/** The text with quoted strings and identifiers blanked out, for finding `$name` parameters. */
function outsideQuotes(sql: string): string {
  let out = '';
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i] as string;
    if (ch === "'" || ch === '"') {
      const end = closingQuote(sql, i);
      out += ' ';
      i = end;
    } else out += ch;
  }
  return out;
}

/** Index of the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i;
    } else i++;
  }
  return sql.length - 1;
}

/** The one way an identifier that cannot be bound enters SQL text. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string literal for the few places DuckDB takes no parameter (ATTACH paths, COPY targets). */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
