// Rate limits counted in a real Redis (serve.js --redis-url) hold for two API processes together,
// as they would for processes on two machines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { AppStore } from '../../src/apps/store.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const REDIS = process.env['DRIVING_REDIS_SERVER'] ?? 'redis-server';
let ws: Workspace;
let redis: ChildProcess;
let redisUrl = '';
const serves: ServeProcess[] = [];

beforeAll(async () => {
  ws = await workspace('UTC');
  const port = await freePort();
  redis = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  redis.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/Ready to accept connections/.test(out)) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    redis.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  redisUrl = `redis://127.0.0.1:${port}`;
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
    for (let i = 0; i < 2; i++) {
      serves.push(await startServe(['--data-dir', ws.dir, '--port', String(await freePort()), '--workers', '1', '--redis-url', redisUrl], { DRIVING_API_RATE_PER_APP: '30', DRIVING_API_APP_RATE_WINDOW_MS: '60000' }));
    }
    const headers = { authorization: `Bearer ${key}` };
    const issued = await fetch(`${serves[0]!.url}/v1/org-user/driver-1/token`, { method: 'POST', headers });
    const { token } = (await issued.json()) as { token: string };
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push(await lookup(`${serves[i % 2]!.url}/v1/token/${token}`, headers));
    // 30 in the window over both processes: the token's issue took one
    expect(statuses.filter((s) => s === 200), statuses.join(' ')).toHaveLength(29);
    expect(statuses.filter((s) => s === 429), statuses.join(' ')).toHaveLength(31);
  });
});
