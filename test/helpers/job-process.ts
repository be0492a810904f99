import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node jobs/<job>.js args` from the repository root as a real process. The data folder comes
 * from the flags and `env` only, never the caller's shell.
 */
export function startJob(
  job: string,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Ran> } {
  const base = { ...process.env };
  delete base['DRIVING_DATA_DIR'];
  const child = spawn(process.execPath, [`jobs/${job}.js`, ...args], { cwd: ROOT, env: { ...base, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Ran>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

export const runJobProcess = (job: string, args: string[], env: Record<string, string> = {}): Promise<Ran> =>
  startJob(job, args, env).done;

/** A process holding a DuckDB file open read-write (another job's lock) until `release`. */
export async function holdDatabase(file: string): Promise<{ pid: number; release: () => Promise<void> }> {
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const i = await DuckDBInstance.create(${JSON.stringify(file)});
    await i.connect(); console.log('holding'); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => holder.stdout?.once('data', () => resolve()));
  const exited = new Promise<void>((resolve) => holder.on('close', () => resolve()));
  return {
    pid: holder.pid as number,
    release: async () => {
      holder.stdin?.end();
      await exited;
    },
  };
}

/** Runs `node jobs/<job>.js args`; with `killOn`, sends SIGKILL as soon as its stderr shows that text. */
export function runJobKilledOn(
  job: string,
  args: string[],
  killOn?: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const { child } = startJob(job, args, env);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (killOn && stderr.includes(killOn)) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}
