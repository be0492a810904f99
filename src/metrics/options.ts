import type { Registry } from 'prom-client';
import { listenMetrics, type MetricsListener } from './server.js';

/** The metrics ports when none is given: the API's and the deliverer's, on one machine side by side. */
export const DEFAULT_METRICS_PORT = { serve: 9464, deliver: 9465 } as const;

export interface MetricsFlags {
  metrics: boolean;
  metricsPort?: number;
  metricsHost: string;
}

/**
 * Starts the metrics listener the flags ask for, or none. A port given explicitly that is taken
 * fails the process (exit 3, like the API's own port); the default port taken (a second process
 * on one machine) is said on stderr and the process runs without metrics, since serving matters
 * more than being watched.
 */
export async function startMetrics(
  job: keyof typeof DEFAULT_METRICS_PORT,
  flags: MetricsFlags,
  registry: Registry | 'cluster',
): Promise<MetricsListener | null> {
  if (!flags.metrics) return null;
  const port = flags.metricsPort ?? DEFAULT_METRICS_PORT[job];
  try {
    const listener = await listenMetrics({ port, host: flags.metricsHost, registry });
    process.stderr.write(`${job}: metrics on ${listener.url}\n`);
    return listener;
  } catch (error) {
    if (flags.metricsPort !== undefined || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    process.stderr.write(
      `${job}: metrics not served: the default port ${flags.metricsHost}:${port} is taken (give --metrics-port)\n`,
    );
    return null;
  }
}
