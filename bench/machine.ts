import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, totalmem, cpus } from 'node:os';
import { openDatabase } from '../src/db/open.js';
import { query } from '../src/db/sql.js';

export interface Machine {
  cores: number;
  memoryGiB: number;
  cpu: string;
  node: string;
  duckdb: string;
  commit: string;
}

/** What a result depends on besides the code: cores, memory, CPU, runtimes, and the commit. */
export async function describeMachine(repoDir: string): Promise<Machine> {
  const db = await openDatabase(':memory:');
  let duckdb = 'unknown';
  try {
    duckdb = String((await query(db.connection, 'select version() as v'))[0]?.['v']);
  } finally {
    db.close();
  }
  return {
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    cpu: cpuModel(),
    node: process.version,
    duckdb,
    commit: gitCommit(repoDir),
  };
}

function cpuModel(): string {
  if (existsSync('/proc/cpuinfo')) {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) return (match[1] as string).trim();
  }
  return cpus()[0]?.model ?? 'unknown';
}

function gitCommit(repoDir: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoDir, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
        cwd: repoDir,
        encoding: 'utf8',
      }).trim() !== '';
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}
