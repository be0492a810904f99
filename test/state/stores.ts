import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { freePort, startPostgres, type PgServer } from '../helpers/postgres.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import type { StateLocation } from '../../src/state/db.js';
import { closeStates } from '../../src/state/open.js';

/** The two state stores every shared-state test runs against. */
export const STORES = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORES)[number];

/**
 * Gives a describe block fresh state locations of `kind`: a temp data folder, and for PostgreSQL a
 * new database on a server of the block's own (started in beforeAll, stopped in afterAll).
 */
export function stateLocations(kind: StoreKind): { fresh(): Promise<StateLocation & { databaseUrl: string | null }> } {
  let server: PgServer | null = null;
  const dirs: string[] = [];
  beforeAll(async () => {
    if (kind === 'postgres') server = await startPostgres();
  });
  afterAll(async () => {
    await closeStates();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async fresh() {
      const dataDir = mkdtempSync(join(tmpdir(), 'dds-state-'));
      dirs.push(dataDir);
      return { dataDir, databaseUrl: server ? await server.database() : null };
    },
  };
}

/**
 * serve.js processes on a store, stopped (SIGTERM) after the describe block. `start(where, true)`
 * on PostgreSQL gives the process a data folder of its own, as on another machine; otherwise (and
 * always on SQLite, one machine's store) it serves the location's folder.
 */
export function serveProcesses(): {
  start(
    where: StateLocation & { databaseUrl: string | null },
    ownFolder?: boolean,
  ): Promise<ServeProcess & { dataDir: string }>;
} {
  const serves: ServeProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const s of serves) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async start(where, ownFolder = false) {
      const dataDir = ownFolder && where.databaseUrl ? mkdtempSync(join(tmpdir(), 'dds-machine-')) : where.dataDir;
      if (dataDir !== where.dataDir) dirs.push(dataDir);
      const serve = await startServe(['--data-dir', dataDir, '--port', String(await freePort()), '--workers', '1'], {
        DATABASE_URL: where.databaseUrl ?? '',
      });
      serves.push(serve);
      return Object.assign(serve, { dataDir });
    },
  };
}

const ROOT = join(import.meta.dirname, '..', '..');

/** Opens the store of `dataDir` in a process of its own (as an API or a job starting); its stderr. */
export function openInProcess(dataDir: string, databaseUrl: string | null): Promise<string> {
  const script = `import('./dist/src/state/open.js').then(async (m) => { await m.openState({ dataDir: ${JSON.stringify(dataDir)} }); await m.closeStates(); })`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl ?? '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(err) : reject(new Error(`exit ${code}: ${err}`))));
  });
}
