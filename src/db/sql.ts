import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../repo-root.js';
import { setting } from '../settings.js';

export type Params = Record<string, DuckDBValue>;
export type Row = Record<string, unknown>;

/** The repository's sql/ folder. */
export const SQL_DIR = repoPath('sql') + '/';

const cache = new Map<string, string>();

/** Reads `sql/<name>.sql` once. Names are repository-relative, e.g. `models/marts/safety_scores`. */
export function sqlText(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(join(SQL_DIR, `${name}.sql`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/**
 * `sql/<name>.sql` with each `{{key}}` in it replaced by SQL text the code made: another file's
 * query (`sqlText`), or a name quoted by `quoteIdent`/`quoteLiteral` where DuckDB binds no
 * parameter (a COPY target, a view's file). Values still go in as bound `$name` parameters; a
 * user's text never goes in here.
 */
export function sqlWith(name: string, parts: Record<string, string>): string {
  return sqlText(name).replace(/\{\{\s*(\w+)\s*\}\}/g, (_, key: string) => {
    const part = parts[key];
    if (part === undefined) throw new Error(`sql/${name}.sql: nothing given for {{${key}}}`);
    return part;
  });
}

/** The `$name` parameters a statement names, in order of first use (comments and quotes ignored). */
export function parameterNames(sql: string): string[] {
  return [...new Set(namesIn(stripComments(sql)))];
}

/** Binds only the parameters a statement names, so one params object can serve many files. */
export function paramsFor(sql: string, params: Params = {}): Params | undefined {
  const names = namesIn(sql);
  if (names.length === 0) return undefined;
  const used: Params = {};
  for (const key of names) {
    if (!(key in params)) throw new Error(`SQL parameter $${key} has no value`);
    used[key] = params[key] as DuckDBValue;
  }
  return used;
}

/**
 * Remembers what the scans below found for a text: a job runs the same few hundred statements,
 * some of them many times, and scanning each again is a noticeable part of a small score run. Texts
 * that embed a path (ATTACH, COPY) vary; the memo is emptied when it grows past a bound.
 */
function memo<T>(compute: (text: string) => T): (text: string) => T {
  const seen = new Map<string, T>();
  return (text) => {
    let value = seen.get(text);
    if (value === undefined) {
      if (seen.size >= 1_000) seen.clear();
      value = compute(text);
      seen.set(text, value);
    }
    return value;
  };
}

/** The `$name` parameters a comment-free statement names, each use in order (quotes ignored). */
const namesIn = memo((sql: string): string[] =>
  [...outsideQuotes(sql).matchAll(/\$([a-z_][a-z0-9_]*)/gi)].map((m) => m[1] as string),
);

/** With DRIVING_SQL_TRACE set, each statement's time goes to stderr (to find the slow or the failing one). */
export const TRACE = setting('DRIVING_SQL_TRACE');

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
  await createTempTable(conn, table, sqlText(name), params);
}

/** Holds a query's rows in a temp table `table` (replaced if it was there). */
export async function createTempTable(
  conn: DuckDBConnection,
  table: string,
  select: string,
  params?: Params,
): Promise<void> {
  await createTemp(conn, 'table', table, select, params);
}

/** A temp table or view `name` over a query, replaced if it was there (a view binds no parameter). */
export async function createTemp(
  conn: DuckDBConnection,
  kind: 'table' | 'view',
  name: string,
  select: string,
  params?: Params,
): Promise<void> {
  // the name is the caller's: DuckDB binds no parameter for it
  await run(
    conn,
    `create or replace temp ${kind === 'view' ? 'view' : 'table'} ${quoteIdent(name)} as\n${select}`,
    params,
  );
}

/** Runs a file of several statements separated by semicolons, binding what each one names. */
export async function runScript(conn: DuckDBConnection, name: string, params?: Params): Promise<void> {
  for (const statement of splitStatements(sqlText(name)))
    await traced(statement, () => conn.run(statement, paramsFor(statement, params)));
}

/** Runs a file of several statements and returns the rows of the last one (a SELECT). */
export async function queryScript(conn: DuckDBConnection, name: string, params?: Params): Promise<Row[]> {
  const statements = splitStatements(sqlText(name));
  const last = statements.pop();
  if (last === undefined) return [];
  for (const statement of statements) await traced(statement, () => conn.run(statement, paramsFor(statement, params)));
  return query(conn, last, params);
}

/** The statements of a file's text, comments dropped (a new array each call: callers take from it). */
export function splitStatements(text: string): string[] {
  return [...statementsOf(text)];
}

const statementsOf = memo((text: string): string[] =>
  stripComments(text)
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);

/**
 * Drops `--` line comments (so a `$word` in a comment is never taken for a parameter), leaving
 * quoted text alone: a path such as '/tmp/a--b' stays whole.
 */
export const stripComments = memo((sql: string): string => {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql.charCodeAt(i);
    if (ch === QUOTE || ch === DOUBLE_QUOTE) i = closingQuote(sql, i);
    else if (ch === DASH && sql.charCodeAt(i + 1) === DASH) {
      out.push(sql.slice(from, i), '\n');
      while (i < sql.length && sql.charCodeAt(i) !== NEWLINE) i++;
      from = i + 1;
    }
  }
  out.push(sql.slice(from));
  return out.join('');
});

/** The text with quoted strings and identifiers blanked out, for finding `$name` parameters. */
function outsideQuotes(sql: string): string {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql.charCodeAt(i);
    if (ch === QUOTE || ch === DOUBLE_QUOTE) {
      out.push(sql.slice(from, i), ' ');
      i = closingQuote(sql, i);
      from = i + 1;
    }
  }
  out.push(sql.slice(from));
  return out.join('');
}

const QUOTE = 39; // '
const DOUBLE_QUOTE = 34; // "
const DASH = 45;
const NEWLINE = 10;

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

/** Whether `error` is DuckDB's for a table that does not exist (a new database's first look at it). */
export function isMissingTable(error: unknown, table: string): boolean {
  return (error instanceof Error ? error.message : String(error)).includes(`Table with name ${table} does not exist`);
}
