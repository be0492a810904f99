import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** A job of jobs/ run as a process, with what it said. */
export interface Running {
  child: ChildProcess;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr (its first group); rejects if the process exits first. */
  said(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

export function start(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Running {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env });
  let err = '';
  const waiters: (() => void)[] = [];
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
    for (const w of waiters) w();
  });
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stderr: () => err,
    exited,
    said: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(err);
          if (m) resolve(m[1] ?? m[0]);
        };
        waiters.push(check);
        check();
        void exited.then((code) => reject(new Error(`${script} exited (${code}) before saying ${pattern}: ${err}`)));
      }),
  };
}

/** A tool of the machine (promtool, systemd-analyze), or null with why it is missing. */
export function tool(name: string): string | null {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** Runs a tool; its exit status and what it printed. */
export function runTool(command: string, args: string[], input?: string): { status: number | null; output: string } {
  const r = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', input });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
