// deploy/haproxy.cfg with the real HAProxy over two serve.js processes sharing one state store:
// one backend killed with -9 in the middle of a steady stream of GETs fails none of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, steadyLoad, until, type ServeProcess } from '../helpers/serve-process.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const ROOT = join(import.meta.dirname, '..', '..');
const HAPROXY = process.env['DRIVING_HAPROXY'] ?? '/usr/sbin/haproxy';

let ws: Workspace;
let key = '';
const backends: ServeProcess[] = [];
let haproxy: ChildProcess | null = null;

/** The shipped configuration with its three ports replaced by free ones. */
function renderConfig(front: number, a: number, b: number): string {
  const text = readFileSync(join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
  for (const port of ['8080', '8081', '8082']) expect(text).toContain(`127.0.0.1:${port}`);
  return text
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${front}`)
    .replaceAll('127.0.0.1:8081', `127.0.0.1:${a}`)
    .replaceAll('127.0.0.1:8082', `127.0.0.1:${b}`);
}

beforeAll(async () => {
  if (!existsSync(HAPROXY)) throw new Error(`HAProxy is not installed (${HAPROXY}): apt-get install haproxy`);
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const now = new Date();
  // a published snapshot, so /readyz says 200
  await runGenerate({ dataDir: ws.dir, users: 2, days: 2, seed: 5, now });
  await runLoad({ dataDir: ws.dir, now });
  await runScore({ dataDir: ws.dir, now });
});
afterAll(async () => {
  haproxy?.kill('SIGKILL');
  for (const b of backends) if (b.child.exitCode === null) b.child.kill('SIGKILL');
  ws?.cleanup();
});

describe('HAProxy over two API processes', () => {
  it('fails no GET when one backend is killed with -9 under load', async () => {
    const [front, a, b] = [await freePort(), await freePort(), await freePort()];
    for (const port of [a, b])
      backends.push(await startServe(['--data-dir', ws.dir, '--port', String(port), '--workers', '1']));
    const cfg = join(ws.dir, 'haproxy.cfg');
    writeFileSync(cfg, renderConfig(front, a, b));
    let log = '';
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    const url = `http://127.0.0.1:${front}`;
    await until(async () => {
      try {
        return (await fetch(`${url}/readyz`)).status === 200;
      } catch {
        return false;
      }
    }, `HAProxy in front: ${log}`).catch(async (error: Error) => {
      const direct = await fetch(`${backends[0]!.url}/readyz`).then(
        async (r) => `${r.status} ${await r.text()}`,
        (e: Error) => e.message,
      );
      const front = await fetch(`${url}/readyz`).then(
        async (r) => `${r.status} ${await r.text()}`,
        (e: Error) => e.message,
      );
      throw new Error(
        `${error.message}; backend /readyz: ${direct}; front: ${front}; haproxy exit ${haproxy?.exitCode} ${haproxy?.signalCode}`,
      );
    });
    const issued = await fetch(`${url}/v1/org-user/driver-1/token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(issued.status).toBe(200);
    const { token } = (await issued.json()) as { token: string };

    const load = steadyLoad(`${url}/v1/token/${token}`, { authorization: `Bearer ${key}` }, 200);
    await new Promise((r) => setTimeout(r, 1_500));
    backends[0]!.child.kill('SIGKILL');
    const killedAt = Date.now();
    await backends[0]!.exited;
    // two seconds of GETs after the kill: some 400 at this rate, of which the assertions below need 10
    await new Promise((r) => setTimeout(r, 2_000));
    const result = await load.stop();
    expect(result.failed).toEqual([]);
    // GETs went on through the kill: some were answered before it, and many after it
    expect(result.okAt.filter((t) => t < killedAt).length).toBeGreaterThan(10);
    expect(result.okAt.filter((t) => t > killedAt + 1_000).length).toBeGreaterThan(10);
    // the survivor answers alone now
    expect((await fetch(`${url}/v1/token/${token}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });
});
