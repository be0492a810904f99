import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  path: string;
  /** Requests this receiver had seen before this one (0 for the first). */
  index: number;
}

/**
 * What the receiver does with a request: answer a status (after a delay, or once `until` has
 * resolved: an event rather than a time, for tests that must not depend on the machine's speed),
 * or hang.
 */
export type Behaviour = (
  request: Received,
) =>
  | { status: number; delayMs?: number; until?: Promise<unknown>; headers?: Record<string, string>; body?: string }
  | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests being handled right now, and the most seen at once. */
  inFlight: () => number;
  maxInFlight: () => number;
  setBehaviour(behaviour: Behaviour): void;
  /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on a loopback port that records every request with its raw body. */
export async function startReceiver(
  behaviour: Behaviour = () => ({ status: 204 }),
  path = '/hooks',
): Promise<Receiver> {
  let current = behaviour;
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        path: req.url ?? '',
        index: received.length,
      };
      received.push(entry);
      for (const w of waiters.filter((x) => received.length >= x.count)) w.resolve();
      const answer = current(entry);
      if (answer === 'hang') return;
      void (answer.until ?? Promise.resolve()).then(() =>
        setTimeout(() => {
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        }, answer.delayMs ?? 0),
      );
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    setBehaviour: (b) => {
      current = b;
    },
    // a limit for a receiver that gets nothing, not for a slow sender: a busy machine delivers late
    waitFor: (count, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        if (received.length >= count) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
