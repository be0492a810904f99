import type { DuckDBConnection } from '@duckdb/node-api';
import { createTemp, queryFile, quoteIdent, quoteLiteral, run, type Params } from './sql.js';

export { createTempTable } from './sql.js';

// The statements whose text names something DuckDB takes no parameter for: a file path (ATTACH,
// COPY ... TO), a database alias, a temp table or view chosen by the caller. Each is written once
// here, the name quoted by quoteIdent/quoteLiteral; the queries they wrap come from sql/.

/** Where a COPY reads: a query's text (from sqlText) or a table of the connection. */
export type CopySource = { query: string } | { table: string };

/** Writes a query's rows (or a table's) to the file `target`; `options` is the code's own format clause. */
export async function copyTo(
  conn: DuckDBConnection,
  source: CopySource,
  target: string,
  options: string,
  params?: Params,
): Promise<void> {
  const from = 'table' in source ? quoteIdent(source.table) : `(${source.query})`;
  // the target is a path: COPY takes no parameter for it
  await run(conn, `copy ${from} to ${quoteLiteral(target)} (${options})`, params);
}

/** Attaches a database file under `alias` (`options`: the code's own, e.g. `READ_WRITE`). */
export async function attach(conn: DuckDBConnection, file: string, alias: string, options?: string): Promise<void> {
  // ATTACH takes no parameter for its path
  await run(conn, `attach ${quoteLiteral(file)} as ${quoteIdent(alias)}${options ? ` (${options})` : ''}`);
}

/** Detaches `alias` if it is attached. */
export async function detach(conn: DuckDBConnection, alias: string): Promise<void> {
  await run(conn, `detach database if exists ${quoteIdent(alias)}`);
}

/** Checkpoints the attached database `alias` (its rows in its file before it is read or copied). */
export async function checkpoint(conn: DuckDBConnection, alias: string): Promise<void> {
  await run(conn, `checkpoint ${quoteIdent(alias)}`);
}

/** Copies every table of the database `from` into the (attached, empty) database `to`. */
export async function copyDatabase(conn: DuckDBConnection, from: string, to: string): Promise<void> {
  await run(conn, `copy from database ${quoteIdent(from)} to ${quoteIdent(to)}`);
}

/** A temp table or view of a connection, by name. */
export interface TempObject {
  name: string;
  kind: 'table' | 'view';
}

/** Drops a temp table or view of the connection, if it is there. */
export async function dropTemp(
  conn: DuckDBConnection,
  name: string,
  kind: TempObject['kind'] = 'table',
): Promise<void> {
  await dropTemps(conn, [{ name, kind }]);
}

/** Drops temp tables and views in one call (DROP TABLE refuses a view: each says which it is). */
export async function dropTemps(conn: DuckDBConnection, objects: readonly TempObject[]): Promise<void> {
  const drops = objects.map(
    (o) => `drop ${o.kind === 'view' ? 'view' : 'table'} if exists temp.main.${quoteIdent(o.name)}`,
  );
  if (drops.length > 0) await run(conn, drops.join(';\n'));
}

/** A temp view `view` over a query (a view takes no parameters: the query binds none). */
export async function createTempView(conn: DuckDBConnection, view: string, select: string): Promise<void> {
  await createTemp(conn, 'view', view, select);
}

/** Appends a query's rows to `table`, by column name or (without `byName`) by position. */
export async function insertInto(
  conn: DuckDBConnection,
  table: string,
  select: string,
  params?: Params,
  options: { byName?: boolean } = {},
): Promise<void> {
  await run(conn, `insert into ${quoteIdent(table)}${options.byName ? ' by name' : ''}\n${select}`, params);
}

/** The database `use` names now. */
export async function currentDatabase(conn: DuckDBConnection): Promise<string> {
  const [row] = await queryFile(conn, 'ops/db/current_database');
  return String(row?.['db']);
}

/** Runs `fn` with `alias` the database in use (unqualified names resolve there), then switches back. */
export async function inDatabase<T>(conn: DuckDBConnection, alias: string, fn: () => Promise<T>): Promise<T> {
  const home = await currentDatabase(conn);
  await use(conn, alias);
  try {
    return await fn();
  } finally {
    await use(conn, home);
  }
}

async function use(conn: DuckDBConnection, database: string): Promise<void> {
  await run(conn, `use ${quoteIdent(database)}`);
}
