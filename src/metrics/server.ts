import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type Registry } from 'prom-client';

export interface MetricsListenerOptions {
  port: number;
  host: string;
  /**
   * The registry to expose; or 'cluster': the primary of a Node cluster answers with the sum of
   * its workers' global registries (prom-client's AggregatorRegistry asks each worker over IPC).
   */
  registry: Registry | 'cluster';
}

export interface MetricsListener {
  /** `http://host:port/metrics` */
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` in Prometheus text format on a listener of its own, apart from the public port:
 * the series name apps and routes, which the public need not see. Anything else is 404.
 */
export async function listenMetrics(options: MetricsListenerOptions): Promise<MetricsListener> {
  const aggregator = options.registry === 'cluster' ? new AggregatorRegistry() : null;
  const registry = options.registry === 'cluster' ? null : options.registry;
  const contentType = aggregator ? AggregatorRegistry.PROMETHEUS_CONTENT_TYPE : (registry as Registry).contentType;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('not found; the metrics are at GET /metrics\n');
      return;
    }
    const text = aggregator ? aggregator.clusterMetrics() : (registry as Registry).metrics();
    text.then(
      (body) =>
        response.writeHead(200, { 'content-type': contentType }).end(request.method === 'HEAD' ? undefined : body),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  // a scrape every few seconds over a kept-alive connection; nothing here is slow to send
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * In a cluster worker: answers the primary's scrapes over IPC with the worker's global registry.
 * prom-client adds that listener when an AggregatorRegistry is made, so one is made here.
 */
export function answerClusterScrapes(): void {
  void new AggregatorRegistry();
}
