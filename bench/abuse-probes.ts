import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HttpClient, type Answer } from './abuse-http.js';

export interface ProbeResult {
  name: string;
  outcome: string;
}

interface ProbeTarget {
  url: string;
  from: string;
  apiKey: string;
  appId: string;
  dataDir: string;
  /** The checkout whose jobs/apps.js manages keys (the server's). */
  repoDir: string;
}

/** `400 ErrorResult`, `500 ErrorResult`, `431 not ErrorResult`: the status and whether the body has the shape. */
function shape(a: { status: number; body: string }): string {
  let body: unknown = null;
  try {
    body = JSON.parse(a.body);
  } catch {
    body = null;
  }
  const b = body as Record<string, unknown> | null;
  const isErrorResult =
    b !== null && typeof b === 'object' && ['code', 'error', 'message', 'requestId'].every((k) => k in b);
  return a.status >= 400
    ? `${a.status} ${isErrorResult ? 'ErrorResult' : 'not ErrorResult'}`
    : `${a.status} (accepted)`;
}

/** One raw request on its own connection: what the server answers, or how the connection ended. */
function raw(url: string, from: string, text: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: from });
    let data = '';
    const timer = setTimeout(() => socket.destroy(), 20_000);
    socket.on('connect', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

/**
 * How the server answers each kind of bad request of the abuse report, as `status shape`, so a
 * run against the code before a change and one after make a before/after table.
 */
export async function abuseProbes(t: ProbeTarget): Promise<ProbeResult[]> {
  const client = new HttpClient(t.url, t.from);
  const results: ProbeResult[] = [];
  const add = (name: string, outcome: string): void => void results.push({ name, outcome });
  const auth = { authorization: `Bearer ${t.apiKey}` };
  try {
    const token = (
      JSON.parse((await client.call('POST', '/v1/org-user/driver-00001/token', auth)).body) as { token: string }
    ).token;
    const sdk = (body: string): Promise<Answer> =>
      client.call(
        'POST',
        '/v1/sdk/trips',
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      );
    add(
      'SDK upload of JSON nested 5,000 deep (valid token)',
      shape(await sdk(`${'['.repeat(5_000)}${']'.repeat(5_000)}`)),
    );
    // a record that passes the upload checks, carrying a field nested 5,000 deep
    const now = Date.now();
    const record = `{"tripId":"deep","os":"ios","startTime":${now - 3_600_000},"endTime":${now - 3_000_000},"points":[],"extra":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    add('SDK upload of a valid record with a field nested 5,000 deep (valid token)', shape(await sdk(record)));
    add(
      'SDK upload announcing 9 MiB (valid token)',
      shape(
        await raw(
          t.url,
          t.from,
          `POST /v1/sdk/trips HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${9 * 1024 * 1024}\r\nConnection: close\r\n\r\n`,
        ),
      ),
    );
    add(
      'SDK upload announcing 5 MB, no token, body never sent',
      shape(
        await raw(
          t.url,
          t.from,
          'POST /v1/sdk/trips HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n',
        ),
      ) + ' (0 = no answer in 20 s)',
    );
    add(
      'NUL byte in the request line',
      shape(await raw(t.url, t.from, 'GET /healthz\u0000 HTTP/1.1\r\nHost: b\r\n\r\n')),
    );
    add(
      'headers of 20 KB',
      shape(await raw(t.url, t.from, `GET /healthz HTTP/1.1\r\nHost: b\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`)),
    );
    const trips = (query: string): Promise<Answer> =>
      client.call('GET', `/v1/org-user/driver-00001/trips?${query}`, auth);
    for (const [name, query] of [
      ['startTime=...+99:99', 'startTime=2026-11-01T10:00:00%2B99:99'],
      ['startTime=... 24:00:00', 'startTime=2026-11-01%2024:00:00'],
      ['limit=0x10', 'limit=0x10'],
      ['limit=1e2', 'limit=1e2'],
      ['limit=+5', 'limit=%2B5'],
    ] as const)
      add(`trip list with ${name}`, shape(await trips(query)));
    const page = JSON.parse((await trips('limit=1')).body) as { nextCursor?: string };
    add(
      'trip list with a cursor and ".extra" appended',
      page.nextCursor
        ? shape(await trips(`limit=1&nextCursor=${encodeURIComponent(`${page.nextCursor}.extra`)}`))
        : 'no cursor issued',
    );
    // before the burst below: once the address is limited, a refused key would be a 429, not a 401
    add('revoke-key, then the old key', await revoked(t, client));
    // the address limit: unauthenticated requests from one address in a burst
    let limited = 0;
    let retryAfter = false;
    for (let i = 0; i < 1_300 && limited === 0; i++) {
      const a = await client.call('GET', '/v1/org-user/x/trips', { authorization: `Bearer dk_made-up-${i}` });
      if (a.status === 429) {
        limited = i + 1;
        retryAfter = a.headers['retry-after'] !== undefined && shape(a) === '429 ErrorResult';
      }
    }
    add(
      '1,300 requests with made-up API keys from one address: first 429 at',
      limited > 0 ? `request ${limited}${retryAfter ? ', ErrorResult with Retry-After' : ''}` : 'none',
    );
  } finally {
    client.close();
  }
  return results;
}

/** `apps.js revoke-key` of the server's checkout, then a request with the key it ended. */
async function revoked(t: ProbeTarget, client: HttpClient): Promise<string> {
  const cli = await promisify(execFile)(
    process.execPath,
    [join(t.repoDir, 'jobs', 'apps.js'), 'revoke-key', t.appId, '--data-dir', t.dataDir, '--json'],
    { cwd: t.repoDir, encoding: 'utf8' },
  ).then(
    (r) => r.stdout,
    () => null,
  );
  if (cli === null) return 'no such command';
  const after = await client.call('POST', '/v1/org-user/driver-00001/token', { authorization: `Bearer ${t.apiKey}` });
  return `old key answered ${after.status} at the next request`;
}
