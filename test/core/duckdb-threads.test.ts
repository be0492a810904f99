import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { duckdbThreads } from '../../src/db/threads.js';

async function threadsOf(options: { threads?: number } = {}): Promise<number> {
  const db = await openDatabase(':memory:', options);
  try {
    const [row] = await query(db.connection, "select current_setting('threads')::integer as n");
    return Number(row?.['n']);
  } finally {
    db.close();
  }
}

/** Runs `work` with DRIVING_DUCKDB_THREADS set to `value` (unset for undefined), then puts it back. */
async function withThreads<T>(value: string | undefined, work: () => Promise<T>): Promise<T> {
  const before = process.env['DRIVING_DUCKDB_THREADS'];
  try {
    if (value === undefined) delete process.env['DRIVING_DUCKDB_THREADS'];
    else process.env['DRIVING_DUCKDB_THREADS'] = value;
    return await work();
  } finally {
    if (before === undefined) delete process.env['DRIVING_DUCKDB_THREADS'];
    else process.env['DRIVING_DUCKDB_THREADS'] = before;
  }
}

describe('DRIVING_DUCKDB_THREADS', () => {
  it('caps the threads of every database opened, unless the caller names its own', async () => {
    expect(await withThreads('1', () => threadsOf())).toBe(1);
    expect(await withThreads('3', () => threadsOf())).toBe(3);
    expect(await withThreads('1', () => threadsOf({ threads: 2 }))).toBe(2);
  });

  it("leaves DuckDB's own default (one a core) when unset or 0", async () => {
    const own = await withThreads(undefined, () => threadsOf());
    expect(own).toBeGreaterThanOrEqual(1);
    expect(await withThreads('0', () => threadsOf())).toBe(own);
    expect(duckdbThreads({})).toBeUndefined();
  });

  it('refuses a value that is not a whole number, naming the variable', () => {
    expect(() => duckdbThreads({ DRIVING_DUCKDB_THREADS: 'two' })).toThrow(
      /DRIVING_DUCKDB_THREADS must be a non-negative integer, got 'two'/,
    );
    expect(() => duckdbThreads({ DRIVING_DUCKDB_THREADS: '-1' })).toThrow(/DRIVING_DUCKDB_THREADS/);
  });
});
