// The load generator's raw HTTP client (bench/raw-http-client.ts) against Node's own HTTP server:
// every kind of response body ends where the server ended it (a length, chunks, headers split over
// packets, a closed connection), and the next request on the same connection is read from its start.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RawHttpPool } from '../../bench/raw-http-client.js';

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(): Promise<{ url: string; connections: () => number; seen: string[] }> {
  let connections = 0;
  const seen: string[] = [];
  server = createServer(async (req, res) => {
    seen.push(`${req.url} ${req.headers.authorization}`);
    if (req.url === '/chunked') {
      res.writeHead(201);
      for (const part of ['a', 'bb'.repeat(3000), 'c']) {
        res.write(part);
        await pause(5);
      }
      return res.end();
    }
    if (req.url === '/big') return res.writeHead(200, { 'content-length': 300_000 }).end('x'.repeat(300_000));
    if (req.url === '/close') return res.writeHead(503, { connection: 'close' }).end('{}');
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/reset') return req.socket.destroy();
    if (req.url === '/split') {
      // the status line and headers in two packets, the body in a third
      req.socket.write('HTTP/1.1 202 Accepted\r\nContent-');
      await pause(5);
      req.socket.write('Length: 4\r\n\r\n');
      await pause(5);
      req.socket.write('body');
      return;
    }
    res.writeHead(200, { 'content-length': 2 }).end('{}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, seen };
}

const get = (pool: RawHttpPool, path: string): Promise<string> =>
  new Promise((resolve) =>
    pool.get(path, { onComplete: (status) => resolve(String(status)), onError: (kind) => resolve(kind) }),
  );

describe('the raw HTTP client', () => {
  it('reads each kind of body to its end and the next response on the same connection from its start', async () => {
    const { url, connections, seen } = await start();
    const pool = new RawHttpPool(url, 1, { authorization: 'Bearer k' });
    const answers: string[] = [];
    // '/split' last: Node's server reads no further request on a connection whose response it did not write itself
    for (const path of ['/a', '/chunked', '/b', '/big', '/empty', '/c', '/split']) answers.push(await get(pool, path));
    expect(answers).toEqual(['200', '201', '200', '200', '204', '200', '202']);
    expect(connections()).toBe(1);
    expect(seen[0]).toBe('/a Bearer k');
    pool.close();
  }, 20_000);

  it('queues requests beyond its connections, and opens a new one after the server closed one', async () => {
    const { url, connections } = await start();
    const pool = new RawHttpPool(url, 2, {});
    const answers = await Promise.all(['/a', '/chunked', '/close', '/b', '/big', '/c'].map((p) => get(pool, p)));
    expect(answers).toEqual(['200', '201', '503', '200', '200', '200']);
    expect(connections()).toBe(3);
    pool.close();
  }, 20_000);

  it('sends one request after another round all its connections, not on the last one used', async () => {
    await start();
    const bySocket = new Map<unknown, number>();
    const listening = server as Server;
    listening.prependListener('request', (req) => bySocket.set(req.socket, (bySocket.get(req.socket) ?? 0) + 1));
    const { port } = listening.address() as AddressInfo;
    const pool = new RawHttpPool(`http://127.0.0.1:${port}`, 4, {});
    // one in flight at a time: a most-recently-used pick would send all twelve on one connection
    for (let i = 0; i < 12; i++) expect(await get(pool, `/r${i}`)).toBe('200');
    expect([...bySocket.values()]).toEqual([3, 3, 3, 3]);
    pool.close();
  }, 20_000);

  it('fails a request whose connection closes without an answer, and the others still complete', async () => {
    const { url } = await start();
    const pool = new RawHttpPool(url, 1, {});
    const answers = await Promise.all(['/a', '/reset', '/b'].map((p) => get(pool, p)));
    expect(answers[0]).toBe('200');
    expect(answers[1]).toMatch(/^(SOCKET_CLOSED|ECONNRESET)$/);
    expect(answers[2]).toBe('200');
    pool.close();
  }, 20_000);
});
