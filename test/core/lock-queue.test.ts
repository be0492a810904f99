// DuckDB's file lock has no queue: a process waiting for a database says so (src/db/open.ts), so
// that one which takes the file again and again (load.js --watch) lets it go first.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, processesWaitingFor } from '../../src/db/open.js';
import { ROOT } from '../helpers/job-process.js';

const dir = mkdtempSync(join(tmpdir(), 'dds-lock-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the wait queue of a database file', () => {
  it('lists a process while it waits for the file, and forgets it once it has the file', async () => {
    const file = join(dir, 'held.duckdb');
    const held = await openDatabase(file);
    expect(processesWaitingFor(file)).toEqual([]);
    const waiter = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      const { openDatabase } = await import(${JSON.stringify(join(ROOT, 'dist', 'src', 'db', 'open.js'))});
      const db = await openDatabase(${JSON.stringify(file)}, { lockWaitMs: 120000 });
      console.log('opened'); db.close();`,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    waiter.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => waiter.on('exit', resolve));
    try {
      await expect.poll(() => processesWaitingFor(file), { timeout: 60_000, interval: 50 }).toEqual([waiter.pid]);
    } finally {
      held.close();
    }
    expect(await exited).toBe(0);
    expect(out).toContain('opened');
    expect(processesWaitingFor(file)).toEqual([]);
  });

  it('drops the entry of a process that died waiting', async () => {
    const file = join(dir, 'held-2.duckdb');
    const held = await openDatabase(file);
    try {
      const waiter = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `
        const { openDatabase } = await import(${JSON.stringify(join(ROOT, 'dist', 'src', 'db', 'open.js'))});
        await openDatabase(${JSON.stringify(file)}, { lockWaitMs: 120000 });`,
        ],
        { cwd: ROOT, stdio: 'ignore' },
      );
      await expect.poll(() => processesWaitingFor(file), { timeout: 60_000, interval: 50 }).toEqual([waiter.pid]);
      const exited = new Promise((resolve) => waiter.on('exit', resolve));
      waiter.kill('SIGKILL');
      await exited;
      expect(processesWaitingFor(file)).toEqual([]);
    } finally {
      held.close();
    }
  });
});
