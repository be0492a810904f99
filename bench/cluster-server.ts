import { startApiServer, type ApiServer } from './api-server.js';
import type { BenchContext } from './context.js';

/**
 * Limits that would refuse what the cluster stages measure, switched off: the app's rate (the
 * stages send more than one app may), its cap in flight, and shedding on event-loop lag (on a
 * shared machine it would refuse a varying share). The shared rate counting itself still runs on
 * every request, as it does in production.
 */
export const UNLIMITED_ENV: NodeJS.ProcessEnv = {
  DRIVING_API_RATE_PER_APP: '100000000',
  DRIVING_API_MAX_IN_FLIGHT_PER_APP: '0',
  DRIVING_API_MAX_EVENT_LOOP_DELAY_MS: '0',
};

/**
 * `serve.js --workers N --no-metrics` over a data folder, ready and with every worker's serving
 * pack warm: /readyz is asked on new connections (the primary hands each to the next worker)
 * until enough answers in a row say the page cache is not warming any more.
 */
export async function startCluster(
  ctx: BenchContext,
  dataDir: string,
  workers: number,
  options: { env?: NodeJS.ProcessEnv; port?: number; args?: string[]; onStderrLine?: (line: string) => void } = {},
): Promise<ApiServer> {
  const server = await startApiServer(ctx, dataDir, {
    workers,
    env: { ...UNLIMITED_ENV, ...options.env },
    args: ['--no-metrics', ...(options.args ?? [])],
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.onStderrLine ? { onStderrLine: options.onStderrLine } : {}),
  });
  try {
    await allWarm(server.url, 3 * workers);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

async function allWarm(url: string, inARow: number): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  let row = 0;
  while (row < inARow) {
    const res = await fetch(`${url}/readyz`, { headers: { connection: 'close' } });
    const body = (await res.json()) as { pageCache?: string };
    row = res.status === 200 && body.pageCache !== 'warming' ? row + 1 : 0;
    if (Date.now() > deadline) throw new Error(`the workers at ${url} did not all finish warming within 10 min`);
    if (row < inARow) await new Promise((r) => setTimeout(r, row === 0 ? 250 : 20));
  }
}
