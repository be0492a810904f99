// The API benchmark's load generator measures what a client at a fixed rate would see: a server
// stall shows in the latencies of every request due during it, and requests never answered count
// as failed. Run as the real process against a real loopback server.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { LoadGeneratorConfig, LoadGeneratorResult } from '../../bench/load-generator.js';

const ROOT = join(import.meta.dirname, '..', '..');
const servers: Server[] = [];
const dir = mkdtempSync(join(tmpdir(), 'dds-loadgen-'));
afterAll(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

// Every request's path is its index in the schedule (`/r/<i>`, due at i / rate seconds after the
// generator's start), so the server decides by WHICH request it is, never by its own clock: the
// outcome is the same on an idle machine and on a busy one that starts the generator late.
const indexed = (count: number): string[] => Array.from({ length: count }, (_, i) => `/r/${i}`);

async function serve(handler: (index: number, answer: (status?: number) => void) => void): Promise<string> {
  return listen(
    createServer((req, res) => {
      req.resume();
      handler(Number(/^\/r\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1), (status = 200) => res.writeHead(status).end('{}'));
    }),
  );
}

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Holds the answers of `count` requests until every one of them has arrived AND `release()` was
 * called (by a later request's arrival): requests on different connections may arrive out of
 * order, and a held request arriving after the release would escape the stall.
 */
function holding(count: number): { hold: (answer: () => void) => void; release: () => void } {
  const held: (() => void)[] = [];
  let released = false;
  let open = false;
  const flush = (): void => {
    if (!released || held.length < count || open) return;
    open = true;
    for (const answer of held.splice(0)) answer();
  };
  return {
    hold: (answer) => {
      held.push(answer);
      flush();
    },
    release: () => {
      released = true;
      flush();
    },
  };
}

// each test runs with both clients: undici and the raw `net` one (bench/raw-http-client.ts); the
// tests run at once, each with its own server and generator process: a run is seconds of a fixed
// rate, mostly waiting
function generate(
  client: LoadGeneratorConfig['client'],
  config: Omit<LoadGeneratorConfig, 'client'>,
): Promise<LoadGeneratorResult> {
  const file = join(dir, `${Math.random()}.json`);
  writeFileSync(file, JSON.stringify({ client, ...config }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/bench/load-generator.js', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop() as string)) : reject(new Error(`exit ${code}`)),
    );
  });
}

describe.concurrent.each(['undici', 'net'] as const)('the load generator (%s)', (client) => {
  it("shows a server stall in p99 (latency from each request's due time) and keeps the rate", async () => {
    // 200/s: request i is due at 5i ms. Those due from 500 ms to 900 ms (i = 100..179) are held
    // until request 180 (due at 900 ms) arrives: each waited at least 900 - 5i ms from its due time,
    // since no request is sent before it is due, whatever the machine's load.
    const stall = holding(80);
    const url = await serve((i, answer) => {
      if (i >= 100 && i < 180) return stall.hold(answer);
      if (i >= 180) stall.release();
      answer();
    });
    const r = await generate(client, {
      url,
      apiKey: 'k',
      paths: indexed(401),
      rate: 200,
      seconds: 2,
      connections: 100,
    });
    // the rate is kept by schedule: requests due at 0, 5, ..., 2000 ms (the last one on the edge)
    expect(r.sent).toBeGreaterThanOrEqual(400);
    expect(r.sent).toBeLessThanOrEqual(401);
    expect(r.requests).toBe(r.sent);
    expect(r.measured).toBe(r.sent);
    expect(r.errors + r.timeouts + r.non2xx).toBe(0);
    // its CPU while sending is counted, and is some of the run, never more than its cores allow
    expect(r.cpuSecondsSending).toBeGreaterThan(0);
    expect(r.cpuSecondsSending).toBeLessThan(2 * r.totalSeconds);
    // 80 of about 400 were held, request i at least 900 - 5i ms: p99 (the 5th highest of 401) is
    // at least request 104's 380 ms, p90 (the 41st highest) at least request 140's 200 ms
    expect(r.p99Ms).toBeGreaterThanOrEqual(380);
    expect(r.p90Ms).toBeGreaterThanOrEqual(200);
    expect(r.maxMs).toBeGreaterThanOrEqual(400);
  }, 30_000);

  it('counts requests that are never answered as failed instead of dropping them', async () => {
    // 100/s: the first 30 requests are answered, the rest never
    const url = await serve((i, answer) => (i < 30 ? answer() : undefined));
    const r = await generate(client, {
      url,
      apiKey: 'k',
      paths: indexed(101),
      rate: 100,
      seconds: 1,
      connections: 200,
      graceMs: 300,
    });
    expect(r.sent).toBeGreaterThanOrEqual(100);
    expect(r.requests).toBe(30);
    expect(r.timeouts).toBe(r.sent - 30);
  }, 30_000);

  it('names each failed request: its kind (status or network error), its path, and when it was sent and failed', async () => {
    // 100/s for 1 s: request 10 is answered 503, request 20's connection is closed without an answer
    const url = await listen(
      createServer((req, res) => {
        req.resume();
        const i = Number(/^\/r\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
        if (i === 20) return req.socket.destroy();
        res.writeHead(i === 10 ? 503 : 200).end('{}');
      }),
    );
    const before = Date.now();
    const r = await generate(client, {
      url,
      apiKey: 'k',
      paths: indexed(101),
      rate: 100,
      seconds: 1,
      connections: 100,
    });
    expect(r.non2xx).toBe(1);
    expect(r.errors).toBe(1);
    expect(r.failures.map((f) => f.path).sort()).toEqual(['/r/10', '/r/20']);
    const closed = r.failures.find((f) => f.path === '/r/20');
    // the error for a connection the server closed with the request on it (undici's, or the raw client's)
    expect(closed?.kind).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|SOCKET_CLOSED)$/);
    expect(r.failureKinds).toEqual({ 'HTTP 503': 1, [closed?.kind as string]: 1 });
    for (const f of r.failures) {
      expect(f.sentAt).toBeGreaterThanOrEqual(before);
      expect(f.failedAt).toBeGreaterThanOrEqual(f.sentAt);
    }
  }, 30_000);
});

describe.concurrent.each(['undici', 'net'] as const)("the load generator's warm-up (%s)", (client) => {
  it('leaves a stall during the warm-up out of the latencies but counts a failure during it', async () => {
    // 200/s, warm-up 0.4 s: requests 0..79 are due in it. Requests 0..59 are held until request
    // 570 arrives (near the end, 2.85 s), so counted they would add 60 latencies of seconds; the
    // first of requests 60..79 to arrive is answered 500. 100 connections: the 60 held ones leave
    // enough free for the measured requests.
    const stall = holding(60);
    let failedOne = false;
    const url = await serve((i, answer) => {
      if (i < 60) return stall.hold(answer);
      if (i >= 570) stall.release();
      if (i < 80 && !failedOne) {
        failedOne = true;
        return answer(500);
      }
      answer();
    });
    const r = await generate(client, {
      url,
      apiKey: 'k',
      paths: indexed(581),
      rate: 200,
      seconds: 2.5,
      connections: 100,
      warmupSeconds: 0.4,
    });
    expect(r.sent).toBeGreaterThanOrEqual(580);
    expect(r.requests).toBe(r.sent);
    // exactly the requests due after the warm-up are measured: none of the 60 held ones
    expect(r.measured).toBe(r.sent - 80);
    // the failure in the warm-up still counts
    expect(r.non2xx).toBe(1);
    expect(r.statusCodes).toEqual({ 200: r.sent - 1, 500: 1 });
  }, 30_000);
});

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
