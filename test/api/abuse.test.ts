// The API under a hostile client, over real loopback sockets: what it refuses before reading,
// the limits on bytes, time, connections and request rates (each an ErrorResult, never a 500),
// strict parameters, and API keys that are revoked or expire at once. Counts and waits are
// bounded; nothing asserts how fast an answer came.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { AppStore } from '../../src/apps/store.js';
import { sqliteFileOf } from '../../src/state/db.js';
import { createApi } from '../../src/api/http/server.js';
import type { ApiLimits } from '../../src/api/http/limits.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { closedByPeer, openSocket, rawRequest, readResponse } from '../helpers/raw-http.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BASE_CLOCK = new Date('2026-11-21T09:00:00Z');

interface Server {
  ws: Workspace;
  api: Awaited<ReturnType<typeof createApi>>;
  url: string;
  port: number;
  key: string;
  clock: { now: Date };
}

/** The real API on 127.0.0.1 with `limits` over the defaults and a clock the test moves. */
async function startServer(
  limits: Partial<ApiLimits> = {},
  setup?: (ws: Workspace, key: string) => Promise<void>,
): Promise<Server> {
  const ws = await workspace('UTC');
  const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  if (setup) await setup(ws, key);
  const clock = { now: BASE_CLOCK };
  const api = await createApi({ dataDir: ws.dir, now: () => clock.now, pollMs: 50, limits });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (api.app.server.address() as AddressInfo).port;
  return { ws, api, url: `http://127.0.0.1:${port}`, port, key, clock };
}

const stop = async (s: Server | undefined): Promise<void> => {
  await s?.api.close();
  s?.ws.cleanup();
};

const ERROR_RESULT = {
  code: expect.any(Number),
  error: expect.any(String),
  message: expect.any(String),
  requestId: expect.any(String),
};

async function call(
  s: Server,
  path: string,
  init: RequestInit & { bearer?: string } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${s.url}${path}`, {
    ...init,
    headers: {
      ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const issueToken = async (s: Server, orgUserId: string): Promise<string> =>
  (await call(s, `/v1/org-user/${orgUserId}/token`, { method: 'POST', bearer: s.key })).body.token;

/** The operator's CLI as a separate process (asynchronously: the server under test shares this event loop). */
async function apps(s: Server, ...args: string[]): Promise<any> {
  const run = await promisify(execFile)(process.execPath, ['jobs/apps.js', ...args, '--data-dir', s.ws.dir, '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(run.stdout);
}

let main: Server;

beforeAll(async () => {
  main = await startServer({ headersTimeoutMs: 1_000, maxHeaderBytes: 4_096 }, async (ws) => {
    const passport = await PassportStore.open(ws.paths.passportFile);
    const userId = (await passport.ensureAccounts(ws.appId, ['driver-1'])).get('driver-1') as number;
    passport.close();
    const trips = Array.from({ length: 5 }, (_, i) =>
      tripRecord({
        appId: ws.appId,
        tripId: `trip-${i}`,
        userId,
        orgUserId: 'driver-1',
        start: `2026-11-0${1 + i}T08:00:00+00:00`,
        seconds: 600,
      }),
    );
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), trips)],
      now: BASE_CLOCK,
    });
  });
});
afterAll(async () => {
  await stop(main);
});

describe('refused before the body is read', () => {
  it('answers an SDK upload without a valid token with 401 while its 5 MB body has not been sent, and closes the connection', async () => {
    for (const authorization of [
      '',
      'Authorization: Bearer pt_made-up-token\r\n',
      `Authorization: Bearer ${main.key}\r\n`,
    ]) {
      const socket = await openSocket(main.port);
      const response = readResponse(socket);
      // the headers announce 5,000,000 bytes; not one of them is sent
      socket.write(
        `POST /v1/sdk/trips HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n`,
      );
      const res = await response;
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toEqual({ ...ERROR_RESULT, code: 40101, error: 'unauthorized' });
      expect(res.headers['connection']).toBe('close');
      expect(await closedByPeer(socket)).toBe(true);
      socket.destroy();
    }
  });

  it('answers a body larger than the limit with 413 before it is sent, on the SDK upload and elsewhere', async () => {
    const token = await issueToken(main, 'big-body');
    const sdk = await rawRequest(
      main.port,
      `POST /v1/sdk/trips HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${9 * 1024 * 1024}\r\n\r\n`,
    );
    expect(sdk.status).toBe(413);
    expect(JSON.parse(sdk.body)).toEqual({ ...ERROR_RESULT, code: 41301, error: 'payload_too_large' });
    sdk.socket.destroy();
    const other = await call(main, '/v1/org-user/big-body/token', {
      method: 'POST',
      bearer: main.key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(20_000) }),
    });
    expect(other.status).toBe(413);
    expect(other.body).toEqual({ ...ERROR_RESULT, code: 41301, error: 'payload_too_large' });
  });

  it('answers JSON nested 5,000 deep with a 400 naming the body, and the server goes on', async () => {
    const token = await issueToken(main, 'deep-body');
    const deep = await call(main, '/v1/sdk/trips', {
      method: 'POST',
      bearer: token,
      headers: { 'content-type': 'application/json' },
      body: `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
    });
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({
      ...ERROR_RESULT,
      code: 40001,
      error: 'invalid_parameter',
      message: 'body: JSON nested deeper than 32 levels',
    });
    const objects = await call(main, '/v1/sdk/trips', {
      method: 'POST',
      bearer: token,
      headers: { 'content-type': 'application/json' },
      body: `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
    });
    expect(objects.status).toBe(400);
    // brackets inside strings are not nesting: a valid record with such a string is judged as a record
    const record = {
      tripId: '[[[[{{{{'.repeat(5),
      os: 'ios',
      startTime: BASE_CLOCK.getTime() - 3_600_000,
      endTime: BASE_CLOCK.getTime() - 3_000_000,
      points: [],
    };
    const fine = await call(main, '/v1/sdk/trips', {
      method: 'POST',
      bearer: token,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(record),
    });
    expect(fine).toMatchObject({ status: 202, body: { accepted: 1 } });
    expect((await call(main, '/healthz')).status).toBe(200);
  });
});

describe("what Node's HTTP parser refuses is an ErrorResult too", () => {
  it('answers a NUL byte in the request line and a malformed header with 400 ErrorResult JSON', async () => {
    for (const text of [
      'GET /healthz\u0000 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
      'NONSENSE\r\n\r\n',
    ]) {
      const res = await rawRequest(main.port, text);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.body)).toEqual({
        ...ERROR_RESULT,
        code: 40002,
        error: 'malformed_request',
        requestId: res.headers['x-request-id'],
      });
      expect(await closedByPeer(res.socket)).toBe(true);
    }
  });

  it('answers headers over the limit with 431 ErrorResult', async () => {
    const res = await rawRequest(main.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(8_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({ ...ERROR_RESULT, code: 43101, error: 'headers_too_large' });
  });

  it('answers headers that never finish with 408 ErrorResult once the header timeout passes', async () => {
    const socket = await openSocket(main.port);
    const response = readResponse(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const res = await response;
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({ ...ERROR_RESULT, code: 40801, error: 'request_timeout' });
    expect(await closedByPeer(socket)).toBe(true);
  });
});

describe('strict parameters', () => {
  const trips = (query: string) => call(main, `/v1/org-user/driver-1/trips?${query}`, { bearer: main.key });

  it('refuses impossible times and offsets, naming the parameter and the reason', async () => {
    const cases: [string, RegExp][] = [
      ['startTime=2026-11-01T10:00:00%2B99:99', /^startTime: .*offset \+99:99 .*±14:00/],
      ['startTime=2026-11-01T10:00:00%2B14:30', /^startTime: .*offset/],
      ['endTime=2026-11-01T10:00:00-15:00', /^endTime: .*offset/],
      ['startTime=2026-11-01T10:00:00%2B05:60', /^startTime: .*offset/],
      ['startTime=2026-11-01%2024:00:00', /^startTime: .*hour 24/],
      ['endTime=2026-11-01T24:00:00Z', /^endTime: .*hour 24/],
      ['startTime=2026-11-01T10:60:00Z', /^startTime: .*minute 60/],
      ['startTime=2026-11-01T10:00:61Z', /^startTime: .*second 61/],
      ['startTime=2026-W44-1T10:00:00Z', /^startTime: .*is not YYYY-MM-DD/],
    ];
    for (const [query, message] of cases) {
      const res = await trips(query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toEqual({
        ...ERROR_RESULT,
        code: 40001,
        error: 'invalid_parameter',
        message: expect.stringMatching(message),
      });
    }
    // the widest real offsets still count
    expect((await trips('startTime=2026-11-01T10:00:00%2B14:00&endTime=2026-11-30T10:00:00-12:00')).status).toBe(200);
  });

  it('takes limit and interval only as plain decimal integers', async () => {
    for (const value of ['0x10', '1e2', '%2B5', '%205', '5%20', '5.0', '', '0b1']) {
      const res = await trips(`limit=${value}`);
      expect(res.status, value).toBe(400);
      expect(res.body.message, value).toMatch(/^limit: /);
    }
    expect((await trips('limit=2&limit=3')).body.message).toBe('limit: given more than once');
    expect((await trips('limit=0')).body.message).toMatch(/^limit: must be >= 1/);
    expect((await trips('limit=2')).status).toBe(200);
    const score = await call(main, '/v1/org-user/driver-1/safety-score?interval=3e1', { bearer: main.key });
    expect(score.status).toBe(400);
    expect(score.body.message).toMatch(/^interval: '3e1' is not a plain decimal integer/);
  });

  it('takes a paging cursor only byte for byte as it was issued', async () => {
    const first = await trips('limit=2');
    const cursor = first.body.nextCursor as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const flip = (s: string, at: number) => `${s.slice(0, at)}${s[at] === 'A' ? 'B' : 'A'}${s.slice(at + 1)}`;
    for (const changed of [
      `${cursor}.extra`,
      `${cursor}.`,
      `${cursor}A`,
      cursor.slice(0, -1),
      flip(cursor, 3),
      flip(cursor, cursor.length - 2),
      `x${cursor}`,
      cursor.replace('.', '..'),
    ]) {
      const res = await trips(`limit=2&nextCursor=${encodeURIComponent(changed)}`);
      expect(res.status, changed).toBe(400);
      expect(res.body.message).toBe('nextCursor: is not a cursor this service issued');
    }
    const second = await trips(`limit=2&nextCursor=${encodeURIComponent(cursor)}`);
    expect(second.status).toBe(200);
    expect(second.body.trips.map((t: any) => t.tripId)).toEqual(['trip-2', 'trip-1']);
  });
});

describe('passport tokens are checked in the shared store', () => {
  it("answers token checks while another process holds the store's write lock, and expiry and deletion count at once", async () => {
    const token = await issueToken(main, 'holder');
    // another connection to the state file takes the write lock, as a long write of another process would
    const other = new Database(sqliteFileOf(main.ws.dir));
    other.exec('begin immediate');
    try {
      const holder = await call(main, `/v1/token/${token}`, { bearer: main.key });
      expect(holder).toMatchObject({ status: 200, body: { orgUserId: 'holder' } });
      expect((await call(main, '/v1/token/pt_made-up', { bearer: main.key })).status).toBe(404);
      const sdk = await call(main, '/v1/sdk/trips', {
        method: 'POST',
        bearer: 'pt_made-up',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(sdk.status).toBe(401);
    } finally {
      other.exec('rollback');
      other.close();
    }
    // 7 days later to the millisecond the token no longer resolves
    main.clock.now = new Date(BASE_CLOCK.getTime() + 7 * 86_400_000);
    try {
      expect((await call(main, `/v1/token/${token}`, { bearer: main.key })).status).toBe(404);
      main.clock.now = new Date(BASE_CLOCK.getTime() + 7 * 86_400_000 - 1);
      expect((await call(main, `/v1/token/${token}`, { bearer: main.key })).status).toBe(200);
    } finally {
      main.clock.now = BASE_CLOCK;
    }
    expect((await call(main, '/v1/org-user/holder', { method: 'DELETE', bearer: main.key })).status).toBe(200);
    expect((await call(main, `/v1/token/${token}`, { bearer: main.key })).status).toBe(404);
    const afterDeletion = await call(main, '/v1/sdk/trips', {
      method: 'POST',
      bearer: token,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(afterDeletion.status).toBe(401);
  });

  it('answers from the store after a restart: the valid tokens, and only those', async () => {
    const s = await startServer();
    try {
      const kept = await issueToken(s, 'kept');
      const gone = await issueToken(s, 'gone');
      expect((await call(s, '/v1/org-user/gone', { method: 'DELETE', bearer: s.key })).status).toBe(200);
      await s.api.close();
      s.api = await createApi({ dataDir: s.ws.dir, now: () => s.clock.now, pollMs: 50 });
      await s.api.app.listen({ port: 0, host: '127.0.0.1' });
      s.url = `http://127.0.0.1:${(s.api.app.server.address() as AddressInfo).port}`;
      expect(await s.api.ctx.passport.activeTokens(s.clock.now)).toBe(1);
      expect((await call(s, `/v1/token/${kept}`, { bearer: s.key })).body).toMatchObject({ orgUserId: 'kept' });
      expect((await call(s, `/v1/token/${gone}`, { bearer: s.key })).status).toBe(404);
    } finally {
      await stop(s);
    }
  });
});

describe('rate limits', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({
      ratePerAddress: 5,
      ratePerApp: 8,
      appRateWindowMs: 60_000,
      ratePerToken: 3,
      rateWindowMs: 60_000,
    });
  });
  afterAll(() => stop(s));

  it('answers 429 with Retry-After in the ErrorResult shape per address, per app and per token; health probes are never limited', async () => {
    const refused: number[] = [];
    for (let i = 0; i < 7; i++)
      refused.push((await call(s, '/v1/org-user/u/trips', { bearer: `dk_made-up-${i}` })).status);
    expect(refused).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await call(s, '/v1/openapi.json');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      ...ERROR_RESULT,
      code: 42901,
      error: 'rate_limited',
      message: expect.stringMatching(/^rate limit of 5 requests per 1 minute reached/),
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // the address is limited, the valid key from it is counted on its own
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++)
      statuses.push((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: s.key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    for (let i = 0; i < 10; i++) expect((await call(s, '/healthz')).status).toBe(200);
    expect((await call(s, '/readyz')).status).not.toBe(429);
  });

  it("weighs an app's requests by cost: a year of history or a large page takes more of the limit than a lookup; another app counts on its own", async () => {
    let otherKey = '';
    const w = await startServer({ ratePerApp: 30, appRateWindowMs: 60_000 }, async (ws) => {
      otherKey = (await new AppStore(ws.paths.appsFile).add({ name: 'other app', timeZone: 'UTC' })).apiKey;
    });
    try {
      const history = '/v1/org-user/nobody/safety-score/history?interval=30';
      const sequence: [path: string, cost: number][] = [
        [history, 12], // the default range: 366 days
        [`${history}&startTime=2026-01-01&endTime=2026-01-31`, 1],
        [history, 12],
        ['/v1/org-user/nobody/trips?limit=100', 5],
      ];
      for (const [path] of sequence) expect((await call(w, path, { bearer: w.key })).status, path).toBe(404);
      // 30 units spent: the next request is refused, whatever it costs, until the window ends
      const refused = await call(w, '/v1/org-user/nobody/trip/t', { bearer: w.key });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        ...ERROR_RESULT,
        code: 42901,
        error: 'rate_limited',
        message: expect.stringMatching(
          /^rate limit of 30 cost units per 1 minute for this app reached \(this request costs 1\)/,
        ),
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('30');
      const costly = await call(w, history, { bearer: w.key });
      expect(costly.body.message).toMatch(/this request costs 12\)/);
      // the other app's limit is its own: 30 units are two years of history and six lookups
      const statuses: number[] = [];
      for (const path of [history, history, ...Array(7).fill('/v1/org-user/nobody/trip/t')])
        statuses.push((await call(w, path, { bearer: otherKey })).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 404, 404, 429]);
    } finally {
      await stop(w);
    }
  });

  it('counts a passport token on its own', async () => {
    const other = await startServer({ ratePerToken: 2 });
    try {
      const token = await issueToken(other, 'device');
      const upload = () =>
        call(other, '/v1/sdk/trips', {
          method: 'POST',
          bearer: token,
          headers: { 'content-type': 'application/json' },
          body: '[]',
        });
      expect([(await upload()).status, (await upload()).status, (await upload()).status]).toEqual([400, 400, 429]);
    } finally {
      await stop(other);
    }
  });
});

describe('overload', () => {
  it("keeps slow uploads on their own app's places: that app gets 429, another app and health probes are answered", async () => {
    let otherKey = '';
    const s = await startServer({ maxInFlight: 2, maxInFlightPerApp: 2, overloadRetryAfterSeconds: 3 }, async (ws) => {
      otherKey = (await new AppStore(ws.paths.appsFile).add({ name: 'other app', timeZone: 'UTC' })).apiKey;
    });
    try {
      const token = await issueToken(s, 'slow-device');
      // two uploads whose bodies are still coming hold the app's two places; the probe goes once the
      // server has taken both (their 'request' events, then one turn of the loop for the hooks)
      const taken = new Promise<void>((resolve) => {
        let n = 0;
        const onRequest = (req: { url?: string }): void => {
          if (req.url !== '/v1/sdk/trips' || ++n < 2) return;
          s.api.app.server.off('request', onRequest);
          setImmediate(resolve);
        };
        s.api.app.server.on('request', onRequest);
      });
      const slow = await Promise.all(
        [0, 1].map(async () => {
          const socket = await openSocket(s.port);
          socket.write(
            `POST /v1/sdk/trips HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[`,
          );
          return socket;
        }),
      );
      await taken;
      const capped = await call(s, '/v1/org-user/x/trips', { bearer: s.key });
      expect(capped.status).toBe(429);
      expect(capped.body).toEqual({
        ...ERROR_RESULT,
        code: 42901,
        error: 'rate_limited',
        message: expect.stringMatching(/^this app has 2 requests in progress/),
      });
      expect(capped.headers.get('retry-after')).toBe('1');
      // the service's gate of 2 is not held by bodies still arriving: another app is answered, twice at once
      const other = await Promise.all([0, 1].map(() => call(s, '/v1/org-user/x/trips', { bearer: otherKey })));
      expect(other.map((r) => r.status)).toEqual([404, 404]);
      expect((await call(s, '/healthz')).status).toBe(200);
      const answers = slow.map((socket) => readResponse(socket));
      for (const socket of slow) socket.write(']');
      expect((await Promise.all(answers)).map((r) => r.status)).toEqual([400, 400]);
      for (const socket of slow) socket.destroy();
      expect((await call(s, '/v1/org-user/x/trips', { bearer: s.key })).status).toBe(404);
    } finally {
      await stop(s);
    }
  });
});

describe('connections', () => {
  it('closes a connection from an address that holds its share, and closes idle ones', async () => {
    const s = await startServer({ maxConnectionsPerAddress: 3, idleTimeoutMs: 500 });
    try {
      const held = await Promise.all([0, 1, 2].map(() => openSocket(s.port)));
      const fourth = await openSocket(s.port);
      expect(await closedByPeer(fourth)).toBe(true);
      // the ones held are served, and idle ones are closed by the server in the end
      const served = readResponse(held[0]!);
      held[0]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await served).status).toBe(200);
      expect(await Promise.all(held.map((socket) => closedByPeer(socket)))).toEqual([true, true, true]);
      const after = await rawRequest(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(after.status).toBe(200);
    } finally {
      await stop(s);
    }
  });
});

describe('API keys', () => {
  it('revoke-key ends the keys at once and issues the new one; --key-id and --previous end only those', async () => {
    const s = await startServer();
    try {
      const old = s.key;
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: old })).status).toBe(200);
      const revoked = await apps(s, 'revoke-key', s.ws.appId);
      // the workspace's app has the key it was made with and the one rotated in: both end
      expect(revoked.revoked).toHaveLength(2);
      expect(revoked.apiKey).toMatch(/^dk_/);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: old })).status).toBe(401);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: revoked.apiKey })).status).toBe(200);

      const rotated = await apps(s, 'rotate-key', s.ws.appId);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: revoked.apiKey })).status).toBe(200);
      const previous = await apps(s, 'revoke-key', s.ws.appId, '--previous');
      expect(previous.revoked).toEqual([revoked.keyId]);
      expect(previous.apiKey).toBeNull();
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: revoked.apiKey })).status).toBe(401);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: rotated.apiKey })).status).toBe(200);

      const byId = await apps(s, 'revoke-key', s.ws.appId, '--key-id', rotated.keyId);
      expect(byId.revoked).toEqual([rotated.keyId]);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: rotated.apiKey })).status).toBe(401);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: byId.apiKey })).status).toBe(200);
      const listed = (await apps(s, 'list')).apps[0];
      expect(listed.keys.map((k: any) => k.keyId)).toEqual([byId.keyId]);
      expect(JSON.stringify(listed)).not.toContain(byId.apiKey);
    } finally {
      await stop(s);
    }
  });

  it('rotate-key --expire-previous keeps the previous key valid for that long only', async () => {
    const s = await startServer();
    try {
      s.clock.now = new Date();
      const old = s.key;
      const rotated = await apps(s, 'rotate-key', s.ws.appId, '--expire-previous', '10m');
      const until = Date.parse(rotated.previousValidUntil);
      expect(until - Date.now()).toBeGreaterThan(9 * 60_000);
      expect(until - Date.now()).toBeLessThanOrEqual(10 * 60_000);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: old })).status).toBe(200);
      s.clock.now = new Date(until - 1);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: old })).status).toBe(200);
      s.clock.now = new Date(until);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: old })).status).toBe(401);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: rotated.apiKey })).status).toBe(200);

      s.clock.now = new Date();
      const now = await apps(s, 'rotate-key', s.ws.appId, '--expire-previous', '0');
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: rotated.apiKey })).status).toBe(401);
      expect((await call(s, '/v1/org-user/u/token', { method: 'POST', bearer: now.apiKey })).status).toBe(200);
      const bad = await promisify(execFile)(
        process.execPath,
        ['jobs/apps.js', 'rotate-key', s.ws.appId, '--expire-previous', '10 minutes', '--data-dir', s.ws.dir],
        { cwd: ROOT, encoding: 'utf8' },
      ).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(bad?.code).toBe(2);
      expect(bad?.stderr).toMatch(/--expire-previous must be/);
    } finally {
      await stop(s);
    }
  });
});
