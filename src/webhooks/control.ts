import { createConnection, createServer, type Server } from 'node:net';
import { chmodSync, rmSync } from 'node:fs';
import { InputError } from '../errors.js';
import type { OperatorRequest } from './operations.js';

type Handler = (request: OperatorRequest) => Promise<unknown>;

/**
 * The running deliverer's control socket (a Unix socket beside the outbox, mode 0600). DuckDB
 * lets no other process open the outbox while the deliverer writes it, so the operator CLI asks
 * the deliverer instead: one JSON line in, one JSON line out.
 */
export async function listenControl(path: string, handle: Handler): Promise<Server> {
  // only the process holding the outbox gets here, so a socket file left by a killed one is stale
  rmSync(path, { force: true });
  const server = createServer((socket) => {
    let input = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      input += chunk;
      if (input.length > 65_536) socket.destroy();
      if (!input.includes('\n')) return;
      let request: OperatorRequest;
      try {
        request = JSON.parse(input.slice(0, input.indexOf('\n'))) as OperatorRequest;
      } catch {
        socket.end(`${JSON.stringify({ ok: false, input: true, error: 'not a JSON request' })}\n`);
        return;
      }
      handle(request).then(
        (result) => socket.end(`${JSON.stringify({ ok: true, result })}\n`),
        (error: unknown) =>
          socket.end(
            `${JSON.stringify({ ok: false, input: error instanceof InputError, error: error instanceof Error ? error.message : String(error) })}\n`,
          ),
      );
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}

/** Sends one request to the running deliverer. */
export function askDeliverer(path: string, request: OperatorRequest, timeoutMs = 30_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let output = '';
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`the deliverer did not answer within ${timeoutMs} ms`)),
    );
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      output += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        const answer = JSON.parse(output) as { ok: boolean; result?: unknown; error?: string; input?: boolean };
        if (answer.ok) resolve(answer.result);
        else reject(answer.input ? new InputError(answer.error ?? 'refused') : new Error(answer.error ?? 'failed'));
      } catch {
        reject(new Error('the deliverer closed the control socket without an answer'));
      }
    });
  });
}
