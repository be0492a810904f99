import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { isMachineError, machineErrorKind } from '../../src/machine-error.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

/** The error `work` throws (it must throw). */
async function thrown(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('errors of the machine, told from errors of a file or a request', () => {
  let disk: Tmpfs | string;
  let other: string;
  beforeAll(() => {
    disk = mountTmpfs(4 * 1024 * 1024);
    other = mkdtempSync(join(tmpdir(), 'dds-machine-'));
  });
  afterAll(() => {
    if (typeof disk !== 'string') disk.unmount();
    rmSync(other, { recursive: true, force: true });
  });

  it('reads a full disk from Node, DuckDB and SQLite as they report it', async (context) => {
    if (typeof disk === 'string') return context.skip(disk);
    const full = disk;
    // SQLite's file exists before the disk fills; its next transaction has no room
    const sqlite = new Database(join(full.dir, 'state.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec('create table t (v text)');
    const duck = await (await DuckDBInstance.create(join(full.dir, 'w.duckdb'))).connect();
    const filler = full.fill();
    try {
      const node = await thrown(() => writeFileSync(join(full.dir, 'upload.ndjson'), 'x'.repeat(64 * 1024)));
      expect((node as NodeJS.ErrnoException).code).toBe('ENOSPC');
      expect(machineErrorKind(node)).toBe('no_space');

      const duckdb = await thrown(() =>
        duck.run(`copy (select range as i, random() as r from range(500000)) to '${join(full.dir, 'p.parquet')}'`),
      );
      expect(String((duckdb as Error).message)).toMatch(/No space left on device/);
      expect(machineErrorKind(duckdb)).toBe('no_space');

      const insert = sqlite.prepare('insert into t values (?)');
      const sqliteFull = await thrown(() => {
        for (let i = 0; i < 10_000; i++) insert.run('y'.repeat(4096));
      });
      expect(machineErrorKind(sqliteFull)).toBe('no_space');
      // wrapped, as the deletion store wraps what its database threw
      expect(isMachineError(new Error('the deletion request could not be recorded', { cause: sqliteFull }))).toBe(true);
    } finally {
      sqlite.close();
      duck.closeSync();
      rmSync(filler);
    }
  });

  it('never takes an error of the content for one, whatever the content says', async () => {
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      // a record (or a file name) that quotes the machine's words is still the file's fault
      const named = join(other, 'No space left on device.ndjson');
      writeFileSync(named, '{"tripId": "No space left on device", "x": [1, 2\n');
      const malformed = await thrown(() => duck.run(`select * from read_ndjson('${named}')`));
      expect(String((malformed as Error).message)).toMatch(/No space left on device/);
      expect(isMachineError(malformed)).toBe(false);
      const cast = await thrown(() => duck.run("select 'Input/output error'::integer"));
      expect(isMachineError(cast)).toBe(false);
      const missing = await thrown(() => duck.run(`select * from read_ndjson('${join(other, 'gone.ndjson')}')`));
      expect(isMachineError(missing)).toBe(false);
    } finally {
      duck.closeSync();
    }
    expect(isMachineError(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBe(false);
    expect(isMachineError(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))).toBe(false);
    expect(isMachineError(new Error('No space left on device'))).toBe(false);
    expect(isMachineError(null)).toBe(false);
  });

  it('names each kind by its code, its SQLSTATE or its words at the end of a DuckDB IO error', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    expect(machineErrorKind(coded('EDQUOT'))).toBe('quota');
    expect(machineErrorKind(coded('EROFS'))).toBe('read_only');
    expect(machineErrorKind(coded('EIO'))).toBe('io');
    expect(machineErrorKind(coded('53100'))).toBe('no_space');
    expect(machineErrorKind(coded('SQLITE_IOERR_WRITE'))).toBe('io');
    expect(machineErrorKind(new Error('IO Error: Could not write file "/d/w.wal": Disk quota exceeded'))).toBe('quota');
    expect(
      machineErrorKind(
        new Error(
          'FATAL Error: Failed to create checkpoint because of error: Could not write file "/d/w.duckdb": No space left on device',
        ),
      ),
    ).toBe('no_space');
    expect(
      machineErrorKind(
        new Error(
          'FATAL Error: Failed: database has been invalidated because of a previous fatal error. The database must be restarted prior to being used again.\nOriginal error: "Could not write file "/d/w.duckdb": No space left on device"',
        ),
      ),
    ).toBe('no_space');
    // the words inside a file's name, not at the line's end, are not the machine's
    expect(
      isMachineError(
        new Error('IO Error: Could not read file "/landing/x: No space left on device.ndjson": Is a directory'),
      ),
    ).toBe(false);
  });
});
