import cluster from 'node:cluster';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { flushToPrimary, settleHandoffs } from './cluster.js';

/**
 * A graceful stop (docs/decisions.md, Storage and processes): on SIGTERM/SIGINT the server stops accepting connections, answers
 * what arrives on the connections it has with `Connection: close` (never a 503), waits until the
 * last one is gone or `drainMs` passed, then closes the rest and runs `close`; the process exits 0.
 * Call before listen.
 */
export function drainOnSignal(
  app: FastifyInstance,
  close: () => Promise<void>,
  options: { drainMs: number; log(line: string): void },
): void {
  let draining = false;
  app.addHook('onRequest', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
  const drain = async (signal: string) => {
    if (draining) return;
    draining = true;
    const server = app.server;
    const deadline = Date.now() + options.drainMs;
    // a stop while the server is still starting: closed before it listens, it would listen after
    // the close and be handed connections for ever (a cluster worker's listen waits on the primary)
    if (!server.listening)
      await once(server, 'listening', { signal: AbortSignal.timeout(options.drainMs) }).catch(() => undefined);
    // no new connections; held requests go on. Node would also close the idle keep-alive
    // connections at once, racing a client that is sending on one right then (it would see the
    // connection drop): they are left open instead, and each is closed after its next response
    // (Connection: close), or at the deadline.
    const closeIdle = server.closeIdleConnections.bind(server);
    server.closeIdleConnections = () => undefined;
    server.close();
    server.closeIdleConnections = closeIdle;
    // a connection the primary was handing over as the server closed is passed on first
    await settleHandoffs();
    for (;;) {
      const open = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n ?? 0)));
      if (open === 0 || Date.now() >= deadline) {
        if (open > 0)
          options.log(`serve: ${signal}: ${open} connection(s) still open after ${options.drainMs} ms; closing them`);
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    server.closeAllConnections();
    await close();
    await flushToPrimary();
  };
  // a worker whose primary is gone (killed) stops too, rather than serve on unsupervised
  if (cluster.isWorker) process.once('disconnect', () => process.emit('SIGTERM'));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      drain(signal).then(
        () => process.exit(0),
        (error: Error) => {
          options.log(`serve: ${signal}: ${error.message}`);
          process.exit(1);
        },
      );
    });
  }
}
