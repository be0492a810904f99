import { join } from 'node:path';
import { childOptions, jobScript, type BenchContext } from './context.js';
import { startNodeChild, type ChildResult, type RunningChild } from './child.js';

export interface ApiServer {
  url: string;
  /** The serve.js process (a cluster's primary). */
  pid: number;
  /** Asks the server to stop (SIGTERM: it drains and closes) and returns what it cost. */
  stop(): Promise<ChildResult>;
}

/**
 * Starts the real `serve.js` on a free loopback port over a data folder and waits until it serves;
 * `repoDir` runs another checkout's (built) server instead of this one's; `env` is added to its
 * environment (limits). One process (`--workers 1`), so figures stay comparable with runs before the
 * cluster, unless `workers` asks for a cluster; `port` instead of any free one; `args` are more flags; `onStderrLine` sees its stderr.
 */
export async function startApiServer(
  ctx: BenchContext,
  dataDir: string,
  options: {
    repoDir?: string;
    env?: NodeJS.ProcessEnv;
    workers?: number;
    port?: number;
    args?: string[];
    onStderrLine?: (line: string) => void;
  } = {},
): Promise<ApiServer> {
  let resolveUrl: (url: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => (resolveUrl = resolve));
  const script = options.repoDir ? join(options.repoDir, 'jobs', 'serve.js') : jobScript(ctx, 'serve');
  const running: RunningChild = startNodeChild(
    'serve',
    script,
    [
      '--data-dir',
      dataDir,
      '--port',
      String(options.port ?? 0),
      '--host',
      '127.0.0.1',
      '--no-log',
      ...(options.repoDir ? [] : ['--workers', String(options.workers ?? 1)]),
      ...(options.args ?? []),
    ],
    {
      ...childOptions(ctx),
      ...(options.repoDir ? { cwd: options.repoDir } : {}),
      ...(options.env ? { env: options.env } : {}),
      onStderrLine: (line) => {
        const match = /listening on (http:\/\/\S+)/.exec(line);
        if (match) resolveUrl(match[1] as string);
        options.onStderrLine?.(line);
      },
    },
  );
  const url = await Promise.race([
    listening,
    running.done.then((r) => {
      throw new Error(`serve.js exited ${r.exitCode} before listening: ${r.stderrTail.slice(-3).join(' | ')}`);
    }),
  ]);
  await waitReady(url);
  return {
    url,
    pid: running.child.pid as number,
    stop: async () => {
      running.child.kill('SIGTERM');
      return running.done;
    },
  };
}

/** /readyz answers 200 once a snapshot is open (within `seconds`). */
export async function waitReady(url: string, seconds = 60): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const res = await fetch(`${url}/readyz`).catch(() => null);
    if (res?.status === 200) return;
    if (Date.now() > deadline)
      throw new Error(`the API at ${url} was not ready within ${seconds} s (last status ${res?.status ?? 'none'})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What /readyz says of the serving pack's page-cache warming (a coarse state), and how long the bench waited for it. */
export interface PageCacheState {
  state: string;
  seconds: number;
}

/**
 * Waits until the server has read its serving pack into the page cache (/readyz `pageCache`), so
 * that the runs measure a server in its steady state, and returns what that took (the server's
 * stderr line `serve: page cache for ...` has its bytes and seconds).
 */
export async function waitPageCache(
  url: string,
  progress: (line: string) => void,
  timeoutMs = 30 * 60_000,
): Promise<PageCacheState> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let lastReport = Date.now();
  for (;;) {
    const body = (await (await fetch(`${url}/readyz`)).json()) as { pageCache?: string };
    const state = body.pageCache ?? 'off';
    if (state !== 'warming') return { state, seconds: Math.round((Date.now() - started) / 100) / 10 };
    if (Date.now() > deadline)
      throw new Error(`the API at ${url} did not finish reading its serving pack within ${timeoutMs / 1000} s`);
    if (Date.now() - lastReport >= 10_000) {
      lastReport = Date.now();
      progress(
        `bench: api: serving pack into the page cache: still warming after ${Math.round((Date.now() - started) / 1000)} s`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export const gb = (bytes: number): string => (bytes / 1e9).toFixed(2);

/** The snapshot the API serves, as /readyz names it (`a@12`). */
export async function servedSnapshot(url: string): Promise<string> {
  const res = await fetch(`${url}/readyz`);
  const body = (await res.json()) as { snapshot?: string };
  return body.snapshot ?? `status ${res.status}`;
}
