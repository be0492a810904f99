import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBResult } from '@duckdb/node-api';
import { paramsFor, sqlText, stripComments, type Params, type Row } from './sql.js';
import { installMacros } from './macros.js';
import { DuckDBResultReader } from './duckdb.js';

/**
 * A fixed set of connections to one instance. A DuckDB connection runs one query at a time (two
 * prepared statements at once on one connection have crashed the process), so each query borrows
 * a connection and waits in line when all are busy.
 */
export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly prepared = new Map<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();
  private readonly waiting: ((conn: DuckDBConnection) => void)[] = [];
  private closed = false;

  private constructor(private readonly all: DuckDBConnection[]) {
    this.idle.push(...all);
  }

  static async open(instance: DuckDBInstance, size: number): Promise<ConnectionPool> {
    const connections: DuckDBConnection[] = [];
    for (let i = 0; i < size; i++) {
      const conn = await instance.connect();
      await conn.run(sqlText('ops/db/time_zone_utc'));
      await installMacros(conn);
      connections.push(conn);
    }
    return new ConnectionPool(connections);
  }

  /** Runs a statement, prepared once per connection and reused: the API runs a handful of them. */
  async query(sql: string, params?: Params): Promise<Row[]> {
    return this.read(sql, params, async (result) => {
      const reader = new DuckDBResultReader(result);
      await reader.readAll();
      return reader.getRowObjectsJson() as Row[];
    });
  }

  /** Runs a statement as `query` does and hands its result to `consume` (e.g. to read it chunk by chunk), on the connection until it is done. */
  async read<T>(sql: string, params: Params | undefined, consume: (result: DuckDBResult) => Promise<T>): Promise<T> {
    const conn = await this.borrow();
    try {
      let statements = this.prepared.get(conn);
      if (!statements) {
        statements = new Map();
        this.prepared.set(conn, statements);
      }
      const text = stripComments(sql);
      let statement = statements.get(text);
      if (!statement) {
        statement = await conn.prepare(text);
        statements.set(text, statement);
      }
      const bound = paramsFor(text, params);
      if (bound) statement.bind(bound);
      return await consume(await statement.run());
    } finally {
      this.giveBack(conn);
    }
  }

  close(): void {
    this.closed = true;
    for (const conn of this.all) conn.closeSync();
  }

  private borrow(): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new Error('connection pool is closed'));
    const conn = this.idle.pop();
    if (conn) return Promise.resolve(conn);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private giveBack(conn: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) next(conn);
    else this.idle.push(conn);
  }
}
