// serve.js --workers N as real processes on a loopback port: every worker answers from the one
// shared state store, a killed worker is replaced, SIGHUP replaces them one at a time under load
// without a failed request, SIGTERM drains (a held request finishes, exit 0), and a rate limit
// holds for all workers together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { freePort } from '../helpers/postgres.js';
import { childrenOf, startServe, steadyLoad, until, type ServeProcess } from '../helpers/serve-process.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let key = '';

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
});
afterAll(() => ws?.cleanup());

const auth = () => ({ authorization: `Bearer ${key}` });

async function issue(url: string, user: string): Promise<string> {
  const res = await fetch(`${url}/v1/org-user/${user}/token`, { method: 'POST', headers: auth() });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe('serve.js --workers 2', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(['--data-dir', ws.dir, '--port', String(await freePort()), '--workers', '2']);
  });
  afterAll(async () => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });

  it('runs two workers on one port, and a DELETE answered by one refuses the token at every other at once', async () => {
    await until(() => serve.workers().length === 2, 'two workers');
    const token = await issue(serve.url, 'driver-1');
    // separate connections: the primary hands them to the workers in turn
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${serve.url}/v1/token/${token}`, { headers: { ...auth(), connection: 'close' } });
      expect(res.status).toBe(200);
    }
    const deleted = await fetch(`${serve.url}/v1/org-user/driver-1`, {
      method: 'DELETE',
      headers: { ...auth(), connection: 'close' },
    });
    expect(deleted.status).toBe(200);
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${serve.url}/v1/token/${token}`, { headers: { ...auth(), connection: 'close' } });
      expect(res.status).toBe(404);
    }
  });

  it('replaces a worker killed with -9 at once', async () => {
    const before = serve.workers();
    expect(before).toHaveLength(2);
    process.kill(before[0] as number, 'SIGKILL');
    await until(() => serve.workers().length === 2 && !serve.workers().includes(before[0] as number), 'a new worker');
    await until(
      () => /worker \d+ died \(SIGKILL\); starting another/.test(serve.stderr()),
      `the primary's word: ${serve.stderr()}`,
      5_000,
    );
    const token = await issue(serve.url, 'driver-2');
    expect((await fetch(`${serve.url}/v1/token/${token}`, { headers: auth() })).status).toBe(200);
  });

  it('replaces every worker one at a time on SIGHUP and fails no request of a steady load', async () => {
    const token = await issue(serve.url, 'driver-3');
    const before = serve.workers();
    const load = steadyLoad(`${serve.url}/v1/token/${token}`, auth(), 200);
    await new Promise((r) => setTimeout(r, 500));
    serve.child.kill('SIGHUP');
    await until(() => /rolling restart done/.test(serve.stderr()), 'the rolling restart', 90_000);
    await new Promise((r) => setTimeout(r, 500));
    const result = await load.stop();
    expect(result.failed.slice(0, 5), serve.stderr()).toEqual([]);
    expect(result.ok).toBeGreaterThan(20);
    const after = serve.workers();
    expect(after).toHaveLength(2);
    expect(after.filter((pid) => before.includes(pid))).toEqual([]);
  });

  it('drains on SIGTERM: a request it holds finishes, nothing new is accepted, exit 0', async () => {
    const token = await issue(serve.url, 'driver-4');
    const port = Number(new URL(serve.url).port);
    // an SDK upload whose body arrives in two halves, the second after the SIGTERM
    const body = JSON.stringify([{ tripId: 'x' }]);
    const held = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/sdk/trips',
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode as number);
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        serve.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 700);
      }, 300);
    });
    // the upload's record is invalid: a 400 naming the body, answered, not a reset connection
    expect(await held).toBe(400);
    expect(await serve.exited).toBe(0);
    await expect(fetch(`${serve.url}/healthz`)).rejects.toThrow();
  });
});

describe('a connection handed over as a worker stops', () => {
  // Node's cluster primary keeps a connection until the worker it handed it to says whether it took
  // it, and forgets the hand-offs of a worker that has exited: a worker that exits right after its
  // server closes, or that is stopped while it starts, could leave a client waiting for ever
  // (src/api/http/cluster.ts, settleHandoffs; src/api/http/drain.ts). The fixture's primary is made busy while
  // clients connect and a worker is stopped, so the hand-offs reach that worker only after its stop
  // began: each must be answered, by it or by the other.
  it('is answered, whether the worker stopping listens or is still starting', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, '..', 'fixtures', 'cluster', 'handoff.mjs'), String(port)],
      { env: { ...process.env, PRIMARY_BUSY_MS: '500' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const workers = () => childrenOf(child.pid as number);
    const listening = (pid: number) => err.includes(`worker ${pid} listening`);
    try {
      await until(() => /listening on/.test(err), `the fixture's start: ${err}`, 30_000);
      for (let round = 0; round < 6; round++) {
        let stopping: number;
        if (round % 2 === 0) {
          await until(() => workers().filter(listening).length === 2, 'two workers listening');
          stopping = workers()[(round / 2) % 2] as number;
        } else {
          // the worker started in place of the one the last round stopped, stopped before it listens
          await until(() => workers().length === 2, 'a replacement');
          stopping = workers().find((pid) => !listening(pid)) ?? Math.max(...workers());
        }
        child.kill('SIGUSR2');
        await new Promise((r) => setTimeout(r, 100));
        const answers = Array.from({ length: 6 }, () =>
          fetch(`http://127.0.0.1:${port}/`, {
            headers: { connection: 'close' },
            signal: AbortSignal.timeout(15_000),
          }).then(
            (res) => String(res.status),
            (error: Error) => error.name,
          ),
        );
        await new Promise((r) => setTimeout(r, 100));
        process.kill(stopping, 'SIGTERM');
        expect(await Promise.all(answers), `round ${round + 1}: ${err}`).toEqual(Array(6).fill('200'));
        await until(() => !workers().includes(stopping), 'the stopped worker gone');
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('rate limits over all workers', () => {
  // each worker counts in memory and flushes to the shared file at its share of the limit: the
  // service admits at least the limit and at most 20% more (docs/api-limits.md, "Counting over workers")
  const LIMIT = 40;
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(['--data-dir', ws.dir, '--port', String(await freePort()), '--workers', '2'], {
      DRIVING_API_RATE_PER_APP: String(LIMIT),
      DRIVING_API_APP_RATE_WINDOW_MS: '60000',
    });
  });
  afterAll(async () => {
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  /** Sends `count` requests, `parallel` at a time, each on a connection of its own (the primary hands them to the workers in turn). */
  async function send(url: string, count: number, parallel: number): Promise<{ ok: number; limited: number }> {
    let ok = 0;
    let limited = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < count) {
          next++;
          const res = await fetch(url, { headers: { ...auth(), connection: 'close' } });
          await res.arrayBuffer();
          if (res.status === 200) ok++;
          else if (res.status === 429) limited++;
        }
      }),
    );
    return { ok, limited };
  }

  /** `count` requests of a fresh app (the limit counts per app), `parallel` at a time: at least the limit admitted, at most 20% more. */
  async function holdsLimit(app: string, user: string, count: number, parallel: number): Promise<void> {
    key = (await new AppStore(ws.paths.appsFile).add({ name: app, timeZone: 'UTC' })).apiKey;
    const token = await issue(serve.url, user);
    const { ok, limited } = await send(`${serve.url}/v1/token/${token}`, count, parallel);
    // the token issue took one of the window's units
    expect(ok + 1).toBeGreaterThanOrEqual(LIMIT);
    expect(ok + 1).toBeLessThanOrEqual(LIMIT * 1.2);
    expect(ok + limited).toBe(count);
  }

  it('hold the configured limit whichever worker a request lands on', () =>
    holdsLimit('rate limited', 'driver-5', 99, 1));

  it('hold a burst spread over both workers within 20% of the limit', () => holdsLimit('burst', 'driver-6', 300, 16));
});
