// A cluster's primary answers GET /metrics with the sum of its workers' series, asked over IPC: a
// real serve.js with two workers, requests spread over both, one scrape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { workspace, type Workspace } from '../helpers/workspace.js';

const SERVE = fileURLToPath(new URL('../../jobs/serve.js', import.meta.url));
let ws: Workspace;
let child: ChildProcess;
let stderr = '';

const until = async (test: () => boolean, what: string, ms = 60_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stderr:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

beforeAll(async () => {
  ws = await workspace('UTC');
  child = spawn(
    process.execPath,
    [SERVE, '--data-dir', ws.dir, '--port', '0', '--workers', '2', '--metrics-port', '0', '--no-log'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await until(() => /listening on http:\/\/\S+ \(2 workers\)/.test(stderr), 'two workers listening');
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  ws.cleanup();
});

describe("a cluster's /metrics", () => {
  it("sums the workers' request counts (each worker answers the primary's scrape)", async () => {
    const api = /listening on (http:\/\/\S+) \(2 workers\)/.exec(stderr)?.[1] as string;
    const metrics = /metrics on (http:\/\/\S+\/metrics)/.exec(stderr)?.[1] as string;
    // a new connection each: the primary hands connections to the workers in turn
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${api}/v1/org-user/x/trips`, { headers: { connection: 'close' } });
      expect(res.status).toBe(401);
    }
    const text = await (await fetch(metrics)).text();
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('driving_http_requests_total{') &&
          l.includes('route="/v1/org-user/:org_user_id/trips"') &&
          l.includes('status="401"'),
      );
    expect(line, text.slice(0, 2000)).toBeDefined();
    expect(Number(line?.split(' ').pop())).toBe(6);
  });
});
