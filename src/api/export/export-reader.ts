import { join } from 'node:path';
import { setting } from '../../settings.js';
import { DuckDBInstance } from '../../db/duckdb.js';
import { ConnectionPool } from '../../db/pool.js';
import type { Params, Row } from '../../db/sql.js';
import { Columns } from './columns.js';

/**
 * DuckDB's memory cap for the bulk export's reads of one snapshot (env DRIVING_API_EXPORT_MEMORY_LIMIT,
 * a DuckDB size). Its cache fills toward the cap over a long export, and all of it is the API's
 * RSS, so the cap is small: 32MB, a little above what a batch's queries pin on the instance's one
 * thread (a cap below that runs out of memory at the first batch; docs/benchmarks.md, export).
 */
export const exportMemoryLimit = (): string => setting('DRIVING_API_EXPORT_MEMORY_LIMIT');

/**
 * The bulk export's own read-only DuckDB instance on a snapshot's file, with a small memory cap.
 *
 * Why a second instance: DuckDB keeps the blocks a query read cached up to its memory_limit, and a
 * whole-range export reads every block of `trips` and `trip_events`. On the snapshot's own instance
 * (1GB cap) that cache grew with the range, and it would push out the blocks the API's other
 * reads keep hot. Here the blocks beyond the cap are dropped (the file is read-only) and read
 * again from the page cache when needed.
 *
 * Opened at the first export of the snapshot, closed with it, never before: DuckDB's read lock on
 * the file is a POSIX record lock, which the kernel drops for the whole process when any of its
 * handles on the file is closed. Closing this instance while the snapshot's stays open would leave
 * the slot unlocked, and a publish could write into it while it is read.
 */
export class ExportReader {
  private opened: Promise<{ instance: DuckDBInstance; pool: ConnectionPool }> | null = null;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly connections = 2,
  ) {}

  static forSlot(publishedDir: string, file: string): ExportReader {
    return new ExportReader(join(publishedDir, file));
  }

  /** Runs a statement on the export's instance (opened at the first call). */
  async query(sql: string, params?: Params): Promise<Row[]> {
    const { pool } = await this.open();
    return pool.query(sql, params);
  }

  /** Runs a statement on the export's instance and reads its result column by column (columns.ts). */
  async columns(sql: string, params?: Params): Promise<Columns> {
    const { pool } = await this.open();
    return pool.read(sql, params, (result) => Columns.read(result));
  }

  /** Closes the instance if it was opened (the snapshot's close calls this, with its own). */
  close(): void {
    this.closed = true;
    const opened = this.opened;
    this.opened = null;
    void opened?.then(
      ({ instance, pool }) => {
        pool.close();
        instance.closeSync();
      },
      () => undefined,
    );
  }

  private open(): Promise<{ instance: DuckDBInstance; pool: ConnectionPool }> {
    if (this.closed) return Promise.reject(new Error('the snapshot is closed'));
    this.opened ??= (async () => {
      // one thread whatever DRIVING_DUCKDB_THREADS says: a batch's queries read a few row groups, and
      // each thread of a scan pins its own blocks, which a small cap must hold
      const instance = await DuckDBInstance.create(this.file, {
        access_mode: 'READ_ONLY',
        memory_limit: exportMemoryLimit(),
        threads: '1',
      });
      try {
        return { instance, pool: await ConnectionPool.open(instance, this.connections) };
      } catch (error) {
        instance.closeSync();
        throw error;
      }
    })();
    // a failed open is tried again by the next export
    this.opened.catch(() => {
      if (!this.closed) this.opened = null;
    });
    return this.opened;
  }
}
