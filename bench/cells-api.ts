import { join } from 'node:path';
import { record, type BenchContext } from './context.js';
import { readMix, requestPaths } from './api-requests.js';
import { smokeCheck, warmupSeconds } from './api-stage.js';
import { startApiServer, waitPageCache, type ApiServer } from './api-server.js';
import { runGenerator } from './generate-run.js';
import { UNLIMITED_ENV } from './cluster-server.js';
import type { CellsFleet } from './cells-setup.js';

/**
 * The API's answer time with cells against one warehouse, at each of the size's request rates: an
 * API machine following both cells (`serve.js --follow a=... --follow b=...`: each request looks
 * its driver's cell up with its account and reads that cell's snapshot) and one serving the one
 * warehouse, one after the other on the same requests (operations 1-4 mixed, over sampled drivers
 * of both cells), each warmed up first, the two in turn at each rate.
 */
export async function cellsApi(ctx: BenchContext, fleet: CellsFleet, root: string): Promise<void> {
  const paths = await requestPaths(fleet.dirs.one, ctx.day, ctx.options.seed);
  const mix = readMix(paths);
  const { apiRates: rates, apiSeconds: seconds, apiConnections: connections } = ctx.options.sizes;
  // the limits that would refuse the bench's one app off, as the cluster stages have them; the
  // shared rate counting still runs on every request
  const env = { ...UNLIMITED_ENV, DATABASE_URL: fleet.url };
  const machines = [
    {
      label: 'API machine following both cells',
      dir: join(root, 'api'),
      args: ['--no-metrics', '--follow', `a=${fleet.dirs.a}`, '--follow', `b=${fleet.dirs.b}`],
    },
    { label: 'API machine serving the one warehouse', dir: fleet.dirs.one, args: ['--no-metrics'] },
  ];
  const results = new Map<string, string[]>();
  const servers: ApiServer[] = [];
  try {
    // both up at once and measured in turn at each rate, so that what else the shared machine does
    // meanwhile falls on both alike
    for (const machine of machines) {
      const server = await startApiServer(ctx, machine.dir, { workers: 1, env, args: machine.args });
      servers.push(server);
      await waitPageCache(server.url, ctx.progress);
      await smokeCheck(server.url, fleet.apiKey, paths);
    }
    for (const rate of rates) {
      for (const [i, machine] of machines.entries()) {
        const server = servers[i] as ApiServer;
        ctx.progress(`bench: cells: ${machine.label}: mixed reads at ${rate}/s`);
        const r = await runGenerator(
          ctx,
          {
            url: server.url,
            apiKey: fleet.apiKey,
            paths: mix,
            rate,
            seconds,
            connections,
            warmupSeconds: warmupSeconds(mix.length, rate),
          },
          'cells',
        );
        const failed = r.errors + r.timeouts + r.non2xx;
        const statuses = Object.entries(r.statusCodes)
          .filter(([code]) => code !== '200')
          .map(([code, count]) => `${count}x ${code}`);
        const line = `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms (${Math.round(r.throughput)} req/s, ${failed} failed${statuses.length > 0 ? `: ${statuses.join(', ')}` : ''})`;
        results.set(String(rate), [...(results.get(String(rate)) ?? []), line]);
        record(ctx, {
          stage: 'cells',
          metric: `${machine.label}, trip list, trip, statistics and score mixed @ ${rate}/s: p50 / p99`,
          value: line,
          unit: '',
        });
      }
    }
  } finally {
    for (const server of servers) ctx.children.push(await server.stop());
  }
  for (const rate of rates) {
    const [cells, one] = results.get(String(rate)) ?? [];
    record(ctx, {
      stage: 'cells',
      metric: `API, trip list, trip, statistics and score mixed @ ${rate}/s, p50 / p99: one API machine following both cells | one serving the one warehouse`,
      value: `${cells ?? '-'} | ${one ?? '-'}`,
      unit: '',
      doc: true,
    });
  }
}
