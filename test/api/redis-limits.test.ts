// Rate limits counted in a real Redis (serve.js --redis-url) hold for two API processes together,
// as they would for processes on two machines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { AppStore } from '../../src/apps/store.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const REDIS = process.env['DRIVING_REDIS_SERVER'] ?? 'redis-server';
let ws: Workspace;
let redis: ChildProcess;
let redisUrl = '';
let redisPort = 0;
const serves: ServeProcess[] = [];

/** redis-server on `port`, resolved once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/Ready to accept connections/.test(out)) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  return child;
}

beforeAll(async () => {
  ws = await workspace('UTC');
  redisPort = await freePort();
  redis = await startRedis(redisPort);
  redisUrl = `redis://127.0.0.1:${redisPort}`;
});
afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  redis?.kill('SIGKILL');
  ws?.cleanup();
});

// A 503 (a process shedding while its event loop lags on a busy machine) is not counted against the
// limit: the client retries it after Retry-After, as the API documents.
async function lookup(url: string, headers: Record<string, string>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, { headers });
    if (response.status !== 503 || attempt === 5) return response.status;
    await response.arrayBuffer();
    await new Promise((r) => setTimeout(r, 1_000 * Number(response.headers.get('retry-after') ?? 1)));
  }
}

describe('rate limits in Redis', () => {
  it('hold the configured limit over two API processes', async () => {
    const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
    // a start waits up to 60 s for Redis here, well past when the test lets it answer again
    const start = async () =>
      startServe(
        ['--data-dir', ws.dir, '--port', String(await freePort()), '--workers', '1', '--redis-url', redisUrl],
        {
          DRIVING_API_RATE_PER_APP: '30',
          DRIVING_API_APP_RATE_WINDOW_MS: '60000',
          DRIVING_REDIS_START_WAIT_MS: '60000',
        },
      );
    serves.push(await start());
    // the second starts while Redis does not answer (stopped for 2 s, longer than a start takes on
    // a quiet machine): it opens once its connection is ready, so even its first request counts in
    // Redis, not on its own (a process that opened at once counted it alone: one more answered)
    redis.kill('SIGSTOP');
    const resumed = new Promise<void>((resolve) => setTimeout(() => resolve(void redis.kill('SIGCONT')), 2_000));
    try {
      serves.push(await start());
    } catch (error) {
      redis.kill('SIGCONT');
      throw error;
    }
    const headers = { authorization: `Bearer ${key}` };
    const issued = await fetch(`${serves[1]!.url}/v1/org-user/driver-1/token`, { method: 'POST', headers });
    const { token } = (await issued.json()) as { token: string };
    await resumed;
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push(await lookup(`${serves[i % 2]!.url}/v1/token/${token}`, headers));
    // 30 in the window over both processes: the token's issue took one
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(' '),
    ).toHaveLength(29);
    expect(
      statuses.filter((s) => s === 429),
      statuses.join(' '),
    ).toHaveLength(31);
    // said last: a process's stderr reaches the test after its answers
    expect(serves[1]!.stderr()).not.toMatch(/counted on this machine/);
  });

  it('keep answering while Redis is down, limited on the machine, and count in Redis again once it is back', async () => {
    const { apiKey } = await new AppStore(ws.paths.appsFile).add({ name: 'redis outage' });
    const serve = await startServe(
      [
        '--data-dir',
        ws.dir,
        '--port',
        String(await freePort()),
        '--workers',
        '2',
        '--redis-url',
        redisUrl,
        '--metrics-port',
        '0',
      ],
      { DRIVING_API_RATE_PER_APP: '20', DRIVING_API_APP_RATE_WINDOW_MS: '60000' },
    );
    serves.push(serve);
    const headers = { authorization: `Bearer ${apiKey}` };
    const issued = await fetch(`${serve.url}/v1/org-user/driver-2/token`, { method: 'POST', headers });
    const { token } = (await issued.json()) as { token: string };
    const url = `${serve.url}/v1/token/${token}`;

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    const during: number[] = [];
    for (let i = 0; i < 30; i++) during.push(await lookup(url, headers));
    // no request fails on the rate limiter: the two workers count together in the machine's store
    // (a window of its own, from the outage on), within the 20% the rule allows
    expect(
      during.every((s) => s === 200 || s === 429),
      during.join(' '),
    ).toBe(true);
    expect(during.filter((s) => s === 200).length, during.join(' ')).toBeGreaterThanOrEqual(20);
    expect(during.filter((s) => s === 200).length, during.join(' ')).toBeLessThanOrEqual(24);
    expect(serve.stderr()).toMatch(/rate limits counted on this machine until Redis answers/);
    const metrics = /metrics on (http:\/\/\S+\/metrics)/.exec(serve.stderr())?.[1] as string;
    const local = async (): Promise<string | undefined> =>
      /^driving_rate_limits_local (\d)/m.exec(await (await fetch(metrics)).text())?.[1];
    expect(await local()).toBe('1');

    redis = await startRedis(redisPort);
    await until(
      () => (serve.stderr().match(/rate limits counted in Redis again/g) ?? []).length >= 2,
      'both workers back on Redis',
    );
    // the machine's window is spent; a fresh Redis admits the limit again, exactly
    const after: number[] = [];
    for (let i = 0; i < 25; i++) after.push(await lookup(url, headers));
    expect(
      after.filter((s) => s === 200),
      after.join(' '),
    ).toHaveLength(20);
    expect(
      after.filter((s) => s === 429),
      after.join(' '),
    ).toHaveLength(5);
    expect(await local()).toBe('0');
  });
});
