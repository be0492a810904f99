import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiLimits } from './limits.js';

/**
 * Bounds what connections can hold: in all (Node closes the one past `maxConnections` at once, so
 * idle connections cannot exhaust file descriptors), per address (one client cannot take them
 * all), and in time (headers, whole request, idleness, keep-alive).
 */
export function boundConnections(server: Server, limits: ApiLimits): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node checks the two timeouts above on this period (default 30 s, longer than the limits)
  server.setTimeout(limits.idleTimeoutMs, (socket: Socket) => socket.destroy());
  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const open = (perAddress.get(address) ?? 0) + 1;
    if (open > limits.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    perAddress.set(address, open);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
}
