import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
  /** The pids of its cluster workers. */
  workers(): number[];
}

/** `node jobs/serve.js ARGS` as a real process; resolves once it says where it listens. */
export async function startServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /** A file descriptor its stdout (the request log, with `--log true`) goes to; default none. */
  stdout: number | 'ignore' = 'ignore',
): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['jobs/serve.js', '--log', 'false', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearInterval(timer);
        resolve(m[1] as string);
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`serve exited ${code}: ${err}`));
    });
  });
  return {
    child,
    url,
    exited,
    stderr: () => err,
    workers: () => childrenOf(child.pid as number),
  };
}

/** The pids of a process's children (a cluster primary's workers). */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Waits until `check()` holds (polled), or fails naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface LoadResult {
  ok: number;
  /** When each 200 arrived (ms since the epoch). */
  okAt: number[];
  failed: { status: number | string; at: number }[];
}

/**
 * GETs `url` at about `perSecond` requests a second until `stop()` is called: each request on its
 * own, as independent clients would send them; any status but 200, or a transport error, counts as failed.
 */
export function steadyLoad(
  url: string,
  headers: Record<string, string>,
  perSecond: number,
): { stop(): Promise<LoadResult> } {
  const result: LoadResult = { ok: 0, okAt: [], failed: [] };
  const inFlight = new Set<Promise<void>>();
  const one = async () => {
    try {
      // a request no one answers is a failure to report, not a test that waits out its time limit
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (res.status === 200) {
        result.ok++;
        result.okAt.push(Date.now());
      } else result.failed.push({ status: res.status, at: Date.now() });
    } catch (error) {
      result.failed.push({
        status: String((error as Error & { cause?: Error }).cause?.message ?? error),
        at: Date.now(),
      });
    }
  };
  const timer = setInterval(() => {
    for (let i = 0; i < Math.max(1, Math.round(perSecond / 50)); i++) {
      const p = one().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }, 20);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      return result;
    },
  };
}
