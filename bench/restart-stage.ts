import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/helpers/postgres.js';
import { record, type BenchContext } from './context.js';
import { readMix, requestPaths } from './api-requests.js';
import { apiSnapshot, generate, parseResult, smokeCheck } from './api-stage.js';
import type { ApiServer } from './api-server.js';
import { startCluster } from './cluster-server.js';
import { ensureBase } from './fixtures.js';
import type { LoadGeneratorResult } from './load-generator.js';
import { childPids } from './process-cpu.js';

/** The rate of the product's promise: a rolling restart at 500 requests a second fails none. */
const RATE = 500;
/** Load before the act (restart, kill) and after it is over, so requests straddle both edges. */
const BEFORE_MS = 3_000;
const AFTER_MS = 3_000;
/** A new worker opens and verifies its snapshot before it listens: on a busy shared machine, a minute or more each. */
const RESTART_TIMEOUT_MS = 15 * 60_000;
/** Each act is done this many times, on the same server. */
const ROUNDS = 2;
const HAPROXY = process.env['DRIVING_HAPROXY'] ?? '/usr/sbin/haproxy';

/**
 * Restart: `serve.js --workers 2` on the api stage's snapshot under its mix of operations 1-4 at
 * 500 requests/s (open loop, bench/load-generator.ts), while the primary gets SIGHUP (a rolling
 * restart) and while one worker is killed with -9; then deploy/haproxy.cfg over two `serve.js`
 * with one killed with -9. Every failed request is counted with its kind (network error code or
 * status) and whether it was sent before the kill (held by the process that died) or after.
 */
export async function benchRestart(ctx: BenchContext): Promise<void> {
  const { apiKey } = await ensureBase(ctx);
  const snapshot = await apiSnapshot(ctx);
  const byOp = await requestPaths(snapshot.dir, ctx.day, ctx.options.seed);
  const paths = readMix(byOp);
  const lines: string[] = [];
  const server = await startCluster(ctx, snapshot.dir, 2, { onStderrLine: (line) => lines.push(line) });
  try {
    await smokeCheck(server.url, apiKey, byOp);
    await warm(ctx, server.url, apiKey, paths);
    for (let round = 1; round <= ROUNDS; round++) {
      const restart = await underLoad(ctx, server.url, apiKey, paths, async (mark) => {
        const from = lines.length;
        mark('sighup');
        process.kill(server.pid, 'SIGHUP');
        await until(
          () => lines.slice(from).some((l) => /rolling restart (done|failed)/.test(l)),
          'the rolling restart',
          RESTART_TIMEOUT_MS,
        );
        if (lines.slice(from).some((l) => /rolling restart failed/.test(l)))
          throw new Error(`rolling restart failed: ${lines.slice(from).join(' | ')}`);
      });
      record(ctx, {
        stage: 'restart',
        metric: `round ${round}: rolling restart (SIGHUP, 2 workers) under mixed ops 1-4 @ ${RATE}/s: requests refused or reset (kinds; unanswered; answered a second, p99)`,
        value: refused(restart),
        unit: `of ${restart.sent} sent${kinds(restart)}${when(restart, 'sighup')}; ${load(restart)}`,
        target: '0',
        met: refused(restart) === 0,
      });
      await killed(ctx, `round ${round}: kill -9 of one of 2 workers`, server.url, apiKey, paths, async () => {
        const workers = childPids(server.pid);
        const victim = workers[0];
        if (victim === undefined) throw new Error('the primary has no worker to kill');
        process.kill(victim, 'SIGKILL');
        return async () =>
          until(
            () => childPids(server.pid).length === 2 && !childPids(server.pid).includes(victim),
            'a replacement worker',
            RESTART_TIMEOUT_MS,
          );
      });
    }
  } finally {
    ctx.children.push(await server.stop());
  }
  await viaHaproxy(ctx, snapshot.dir, apiKey, paths);
}

/** One kill under load: `kill()` kills and returns what to wait for afterwards. */
async function killed(
  ctx: BenchContext,
  label: string,
  url: string,
  apiKey: string,
  paths: string[],
  kill: () => Promise<() => Promise<void>>,
): Promise<void> {
  let killedAt = 0;
  const r = await underLoad(ctx, url, apiKey, paths, async (mark) => {
    mark('kill');
    killedAt = Date.now();
    const settle = await kill();
    await settle();
  });
  const failed = refused(r);
  // a request sent before the kill may have been held by the process that died; one sent after it should not fail
  const listed = r.failures.length;
  const after = r.failures.filter((f) => f.sentAt >= killedAt).length;
  const held = r.marks['kill']?.inFlight ?? 0;
  record(ctx, {
    stage: 'restart',
    metric: `${label} under mixed ops 1-4 @ ${RATE}/s: requests refused or reset (kinds; sent before / after the kill; in flight at the kill in the generator; unanswered; answered a second, p99)`,
    value: failed,
    unit: `of ${r.sent} sent${kinds(r)} (${listed - after} / ${after}${listed < failed ? ` of the first ${listed}` : ''}; ${held} in flight; ${load(r)})`,
    target: 'none sent after the kill',
    met: after === 0,
  });
}

/** The load generator at RATE from BEFORE_MS before `act` until AFTER_MS after it; `mark` notes a moment in the generator. */
async function underLoad(
  ctx: BenchContext,
  url: string,
  apiKey: string,
  paths: string[],
  act: (mark: (name: string) => void) => Promise<void>,
): Promise<LoadGeneratorResult> {
  const load = generate(ctx, {
    url,
    apiKey,
    paths,
    rate: RATE,
    seconds: 0,
    connections: ctx.options.sizes.apiConnections,
    warmupSeconds: 1,
  });
  try {
    await sleep(BEFORE_MS);
    await act((name) => load.child.send({ mark: name }));
    await sleep(AFTER_MS);
  } catch (error) {
    load.child.send({ stop: true });
    await load.done;
    throw error;
  }
  load.child.send({ stop: true });
  return parseResult(await load.done);
}

async function warm(ctx: BenchContext, url: string, apiKey: string, paths: string[]): Promise<void> {
  parseResult(
    await generate(ctx, { url, apiKey, paths, rate: RATE, seconds: 5, connections: ctx.options.sizes.apiConnections })
      .done,
  );
}

/**
 * deploy/haproxy.cfg (its ports replaced by free ones) over two `serve.js --workers 1` on the
 * same data folder; under load, one is killed with -9, started again, and the other is killed.
 */
async function viaHaproxy(ctx: BenchContext, dir: string, apiKey: string, paths: string[]): Promise<void> {
  if (!existsSync(HAPROXY)) {
    record(ctx, {
      stage: 'restart',
      metric: 'HAProxy over two serve.js: kill -9 of one',
      value: `not run: ${HAPROXY} is not installed`,
      unit: '',
    });
    return;
  }
  const [front, stats, ...ports] = [await freePort(), await freePort(), await freePort(), await freePort()] as [
    number,
    number,
    number,
    number,
  ];
  const backends: (ApiServer | null)[] = [];
  let haproxy: ChildProcess | null = null;
  try {
    for (const port of ports) backends.push(await startCluster(ctx, dir, 1, { port }));
    const cfg = join(ctx.options.workDir, 'haproxy.cfg');
    writeFileSync(
      cfg,
      `${haproxyConfig(ctx.repoDir, front, ports)}\n# the bench's own: where it reads whether HAProxy sees both backends up\nfrontend stats\n    bind 127.0.0.1:${stats}\n    stats enable\n    stats uri /stats\n`,
    );
    let log = '';
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    const url = `http://127.0.0.1:${front}`;
    await until(
      async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200,
      `HAProxy in front (${log.slice(-300)})`,
      30_000,
    );
    const bothUp = (): Promise<void> =>
      until(
        async () => upServers(await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text()) === 2,
        'HAProxy to see both backends up',
        120_000,
      );
    await bothUp();
    await warm(ctx, url, apiKey, paths);
    for (let i = 0; i < ports.length; i++) {
      const victim = backends[i] as ApiServer;
      await killed(
        ctx,
        `HAProxy over two serve.js: kill -9 of serve.js ${i + 1} of 2`,
        url,
        apiKey,
        paths,
        async () => {
          process.kill(victim.pid, 'SIGKILL');
          return async () => undefined;
        },
      );
      // HAProxy's view: a backend it took out (checks on /readyz failing or too slow) answers nothing, and with both out it answers 503 itself
      record(ctx, {
        stage: 'restart',
        metric: `HAProxy over two serve.js, after the kill of serve.js ${i + 1}: each backend's health checks failed / times taken out / state`,
        value: checkState(await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text()),
        unit: '',
      });
      ctx.children.push(await victim.stop());
      // back for the other's turn, and seen up by HAProxy's checks again
      backends[i] = await startCluster(ctx, dir, 1, { port: ports[i] as number });
      await bothUp();
    }
  } finally {
    haproxy?.kill('SIGTERM');
    for (const b of backends) if (b) ctx.children.push(await b.stop());
  }
}

/** Servers of the backend HAProxy's statistics (CSV) say are UP. */
function upServers(csv: string): number {
  return csv
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('api_processes,') && !line.startsWith('api_processes,BACKEND') && line.split(',')[17] === 'UP',
    ).length;
}

/** `api1 3 / 1 / DOWN, api2 0 / 0 / UP` from HAProxy's statistics (CSV columns chkfail, chkdown, status). */
function checkState(csv: string): string {
  return csv
    .split('\n')
    .filter((line) => line.startsWith('api_processes,') && !line.startsWith('api_processes,BACKEND'))
    .map((line) => line.split(','))
    .map((f) => `${f[1]} ${f[21]} / ${f[22]} / ${f[17]}`)
    .join(', ');
}

/** The shipped configuration with its three ports replaced. */
function haproxyConfig(repoDir: string, front: number, [a, b]: number[]): string {
  const text = readFileSync(join(repoDir, 'deploy', 'haproxy.cfg'), 'utf8');
  return text
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${front}`)
    .replaceAll('127.0.0.1:8081', `127.0.0.1:${a}`)
    .replaceAll('127.0.0.1:8082', `127.0.0.1:${b}`);
}

/**
 * Requests the server side failed: a network error (reset, closed) or a non-2xx answer. Requests
 * still unanswered 10 s after the run are shown apart, with the rate answered: on a shared machine
 * that cannot keep up with the rate they are a backlog, not something the cluster did.
 */
const refused = (r: LoadGeneratorResult): number => r.errors + r.non2xx;

function load(r: LoadGeneratorResult): string {
  return `${r.timeouts} unanswered; ${Math.round(r.throughput)}/s, p99 ${r.p99Ms >= 100 ? Math.round(r.p99Ms) : r.p99Ms.toFixed(1)} ms`;
}

/** `: 2 x UND_ERR_SOCKET on trip detail, ...`, or nothing when none failed. */
function kinds(r: LoadGeneratorResult): string {
  const byKind = new Map<string, number>();
  for (const f of r.failures) {
    const key = `${f.kind} on ${operationOf(f.path)}`;
    byKind.set(key, (byKind.get(key) ?? 0) + 1);
  }
  return byKind.size === 0 ? '' : `: ${[...byKind].map(([k, n]) => `${n} × ${k}`).join(', ')}`;
}

/** ` (failed 12.3, 12.3 s after the SIGHUP)`: when the first refused requests failed, from a marked moment. */
function when(r: LoadGeneratorResult, mark: string): string {
  const at = r.marks[mark]?.at;
  if (at === undefined || r.failures.length === 0) return '';
  return ` (failed ${r.failures
    .slice(0, 10)
    .map((f) => ((f.failedAt - at) / 1000).toFixed(1))
    .join(', ')} s after the ${mark === 'sighup' ? 'SIGHUP' : mark})`;
}

function operationOf(path: string): string {
  if (/\/trips\?/.test(path)) return 'list';
  if (/\/trip\//.test(path)) return 'detail';
  if (/\/statistics\?/.test(path)) return 'statistics';
  if (/\/safety-score/.test(path)) return 'score';
  return path;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
