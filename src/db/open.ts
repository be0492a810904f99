import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { TRACE } from './sql.js';

export interface OpenOptions {
  readOnly?: boolean;
  /** How long to keep retrying while another process holds a conflicting lock. */
  lockWaitMs?: number;
  memoryLimit?: string;
  threads?: number;
}

export interface Database {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
  path: string;
  close(): void;
}

const LOCK_ERROR = /Could not set lock|Conflicting lock/i;

/**
 * Opens a DuckDB file (or ':memory:') with the session pinned to UTC, so SQL never depends on the
 * machine's zone. A fresh instance every time: the client's cache would hand back a stale one.
 *
 * @example const db = await openDatabase('data/warehouse/warehouse.duckdb'); db.close();
 */
export async function openDatabase(path: string, options: OpenOptions = {}): Promise<Database> {
  if (path !== ':memory:' && !options.readOnly) mkdirSync(dirname(path), { recursive: true });
  const settings: Record<string, string> = {};
  if (options.readOnly) settings['access_mode'] = 'READ_ONLY';
  if (options.memoryLimit) settings['memory_limit'] = options.memoryLimit;
  if (options.threads) settings['threads'] = String(options.threads);
  const deadline = Date.now() + (options.lockWaitMs ?? 0);
  for (let attempt = 0; ; attempt++) {
    try {
      const instance = await DuckDBInstance.create(path, settings);
      const connection = await instance.connect();
      // ICU is built in but loads on first use; the zone is set once it is there.
      await connection.run("set TimeZone = 'UTC'");
      return {
        instance,
        connection,
        path,
        close() {
          const started = performance.now();
          connection.closeSync();
          // closing writes a checkpoint: traced too, as it can be the slow step of a job
          instance.closeSync();
          if (TRACE) process.stderr.write(`close ${((performance.now() - started) / 1000).toFixed(3)} s: ${path}\n`);
        },
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!LOCK_ERROR.test(message) || Date.now() >= deadline) {
        if (LOCK_ERROR.test(message)) throw new DatabaseBusyError(path, message);
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 500)));
    }
  }
}

/** Another process holds the file: DuckDB allows one writer or many readers, never both. */
export class DatabaseBusyError extends Error {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path} is in use by another process (${detail.split('\n')[0]})`);
    this.name = 'DatabaseBusyError';
  }
}
