import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Debian's PostgreSQL 15 (the `postgresql` package, which .ci/run installs where missing). */
const BIN = process.env['DRIVING_PG_BIN'] ?? '/usr/lib/postgresql/15/bin';

export interface PgServer {
  port: number;
  /** A new, empty database on the server: its URL. */
  database(): Promise<string>;
  stop(): Promise<void>;
}

/** A port free on loopback now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** postgres refuses to run as root: as root, its commands run as the `postgres` system user. */
const asOwner = (cmd: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

/**
 * A real PostgreSQL server of the test's own: a fresh cluster in a temp folder, on a free loopback
 * port, trust authentication on loopback only, fsync off (a test's data need not survive a crash).
 */
export async function startPostgres(): Promise<PgServer> {
  if (!existsSync(join(BIN, 'postgres')))
    throw new Error(`PostgreSQL is not installed (${BIN}/postgres): apt-get install postgresql`);
  const dir = mkdtempSync(join(tmpdir(), 'dds-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asOwner(join(BIN, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const [cmd, args] = asOwner(join(BIN, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'max_connections=200',
  ]);
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client(admin);
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      await client.end().catch(() => undefined);
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`postgres did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  let made = 0;
  return {
    port,
    async database() {
      const name = `dds_${process.pid}_${++made}`;
      const client = new pg.Client(admin);
      await client.connect();
      await client.query(`create database ${name}`);
      await client.end();
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      // the postmaster itself (runuser, when root, does not pass a signal on)
      const [stopCmd, stopArgs] = asOwner(join(BIN, 'pg_ctl'), ['-D', data, 'stop', '-m', 'immediate', '-w']);
      const exited = new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      execFileSync(stopCmd, stopArgs, { stdio: 'pipe' });
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
