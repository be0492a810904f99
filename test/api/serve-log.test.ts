// A serve process's lines: the API's own (the snapshot it opened, its page cache) are pino's JSON
// lines on stderr, the same shape as the request log's on stdout, beside the human start line the
// operator and the helpers read; the request log keeps to stdout and holds no line of the API's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { berlinLoaded } from '../helpers/fixtures.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import type { Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let key = '';
let serve: ServeProcess | null = null;
let stdoutFile = '';

/** The JSON lines of a text, each parsed. */
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  const loaded = await berlinLoaded();
  ws = loaded.ws;
  key = loaded.built.key;
  stdoutFile = join(ws.dir, 'serve-stdout.log');
  const fd = openSync(stdoutFile, 'w');
  try {
    serve = await startServe(
      ['--data-dir', ws.dir, '--port', '0', '--metrics-port', '0', '--workers', '1', '--log', 'true'],
      {},
      fd,
    );
  } finally {
    closeSync(fd);
  }
});
afterAll(async () => {
  if (serve && serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  ws?.cleanup();
});

describe("serve.js's lines", () => {
  it("says its own lines through the API's logger: one JSON line each on stderr, the request log on stdout", async () => {
    const s = serve as ServeProcess;
    const res = await fetch(`${s.url}/v1/org-user/no-such-driver/trips`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await res.arrayBuffer();
    // the page cache's line is said once the snapshot's warm-up ends, after the start
    await until(() => s.stderr().includes('serve: page cache for'), 'the page cache line');
    const err = s.stderr().split('\n').filter(Boolean);
    // the human start lines the operator reads (and the helpers wait for) stay as they are
    expect(err.filter((l) => !l.startsWith('{')).sort()).toEqual([
      expect.stringMatching(/^serve: listening on http:\/\//),
      expect.stringMatching(/^serve: metrics on http:\/\//),
    ]);
    const own = jsonLines(s.stderr());
    const warm = own.find((l) => String(l['msg']).startsWith('serve: page cache for'));
    expect(warm).toMatchObject({ level: 30, pid: s.child.pid });
    expect(typeof warm?.['time']).toBe('number');
    for (const line of own) expect(line).not.toHaveProperty('reqId');
    // the request log: one line for the request, of the same shape, and none of the API's own
    await until(() => readFileSync(stdoutFile, 'utf8').includes('"reqId"'), 'the request log line');
    const requests = jsonLines(readFileSync(stdoutFile, 'utf8'));
    expect(requests.length).toBeGreaterThan(0);
    for (const line of requests) {
      expect(line).toHaveProperty('reqId');
      expect(Object.keys(line).slice(0, 4)).toEqual(Object.keys(warm ?? {}).slice(0, 4));
    }
  });
});
