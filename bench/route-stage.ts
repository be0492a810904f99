import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { runGenerator } from './generate-run.js';
import { dropDataDir, ensureBase, folderBytes, newDataDir } from './fixtures.js';
import { startApiServer } from './api-server.js';
import type { LoadGeneratorConfig, LoadGeneratorResult } from './load-generator.js';

/** Target: p99 under 20 ms for a one-hour trip's route at 200 requests/s. */
const MAX_P99_MS = 20;
const RATE = 200;
/** Drivers with one one-hour trip each (1 Hz: 3,601 points per trip). */
const DRIVERS = 100;
const TRIP_SECONDS = 3600;

/**
 * Route: the real load job writes a day of one-hour trips (1 Hz) and its publish their route
 * files; the real `serve.js` answers `GET …/trip/{tripId}/route` for them at 200 requests/s, at
 * the default tolerance (5 m) and with every point (tolerance=0).
 */
export async function benchRoute(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const dir = await newDataDir(ctx, 'route');
  try {
    const drivers = base.users.slice(0, DRIVERS);
    const input = join(dir, 'in', 'one-hour-trips.ndjson');
    mkdirSync(join(dir, 'in'), { recursive: true });
    writeFileSync(
      input,
      drivers
        .map((u, i) => JSON.stringify(oneHourTrip(base.appId, u.orgUserId, u.platformUserId, `route-${i}`, ctx.day, i)))
        .join('\n') + '\n',
    );
    const load = await runNodeChild(
      'load (route setup)',
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--input', input, '--json'],
      childOptions(ctx),
    );
    ctx.children.push(load);
    const report = jobJson(load) as { publish?: { routesWritten?: number } };
    const routeBytes = folderBytes(pathsFor(dir).routesDir);
    record(ctx, {
      stage: 'route',
      metric: `load + publish of ${DRIVERS} one-hour trips (${(DRIVERS * (TRIP_SECONDS + 1)).toLocaleString('en-US')} points): wall / route files written / their MB`,
      value: `${load.wallSeconds.toFixed(1)} s / ${report.publish?.routesWritten ?? '?'} / ${(routeBytes / 1e6).toFixed(1)}`,
      unit: '',
    });
    const server = await startApiServer(ctx, dir);
    try {
      const paths = drivers.map((u, i) => `/v1/org-user/${encodeURIComponent(u.orgUserId)}/trip/route-${i}/route`);
      // floors on the same machine at the same moment: the harness alone, and the trip detail the route reads besides its points
      for (const [label, list] of [
        ['GET /healthz', ['/healthz']],
        ['trip detail of the same trips', paths.map((p) => p.slice(0, -'/route'.length))],
      ] as const) {
        const r = await generate(ctx, {
          url: server.url,
          apiKey: base.apiKey,
          paths: [...list],
          rate: RATE,
          seconds: ctx.options.sizes.apiSeconds,
          connections: ctx.options.sizes.apiConnections,
          warmupSeconds: 2,
        });
        record(ctx, {
          stage: 'route',
          metric: `floor: ${label} @ ${RATE}/s: p50 / p99 / req/s`,
          value: `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms / ${Math.round(r.throughput)}`,
          unit: '',
        });
      }
      for (const [label, query] of [
        ['tolerance 5 m (default)', ''],
        ['tolerance=0 (every point)', '?tolerance=0'],
      ] as const) {
        const first = await fetch(`${server.url}${paths[0]}${query}`, {
          headers: { authorization: `Bearer ${base.apiKey}` },
        });
        const body = await first.text();
        if (first.status !== 200)
          throw new Error(`GET ${paths[0]}${query} answered ${first.status}: ${body.slice(0, 300)}`);
        const positions = (JSON.parse(body) as { route: { properties: { times: unknown[] } } }).route.properties.times
          .length;
        const r = await generate(ctx, {
          url: server.url,
          apiKey: base.apiKey,
          paths: paths.map((p) => `${p}${query}`),
          rate: RATE,
          seconds: ctx.options.sizes.apiSeconds,
          connections: ctx.options.sizes.apiConnections,
          warmupSeconds: 2,
        });
        const failed = r.errors + r.timeouts + r.non2xx;
        record(ctx, {
          stage: 'route',
          metric: `route of a one-hour trip, ${label} @ ${RATE}/s: p50 / p99 (${positions} positions, ${(body.length / 1e3).toFixed(0)} kB)`,
          value: `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms`,
          unit: '',
          target: `p99 < ${MAX_P99_MS} ms, 0 failed`,
          met: r.p99Ms < MAX_P99_MS && failed === 0 && r.throughput >= 0.95 * RATE,
        });
        record(ctx, {
          stage: 'route',
          metric: `route, ${label} @ ${RATE}/s: req/s / failed`,
          value: `${Math.round(r.throughput)} / ${failed}`,
          unit: '',
        });
      }
    } finally {
      ctx.children.push(await server.stop());
    }
  } finally {
    dropDataDir(ctx, dir);
  }
}

/**
 * One trip of one hour at 1 Hz on `day` (UTC 07:00), winding north: points Douglas–Peucker has
 * work with. Positions to 6 decimals and speeds to 2, as an SDK sends them (and the generator
 * writes them): the route file's compact columns, which a read decodes.
 */
export function oneHourTrip(
  appId: string,
  orgUserId: string,
  platformUserId: number,
  tripId: string,
  day: string,
  n: number,
): Record<string, unknown> {
  const start = Date.parse(`${day}T07:00:00Z`);
  const points = Array.from({ length: TRIP_SECONDS + 1 }, (_, i) => ({
    t: start + i * 1000,
    lat: Number((48 + n * 0.01 + (i * 13) / 111_195).toFixed(6)),
    lng: Number((11 + 0.002 * Math.sin(i / 40) + 0.0003 * Math.sin(i / 4.3)).toFixed(6)),
    speed: Number((13 + 2 * Math.sin(i / 60)).toFixed(2)),
  }));
  return {
    appId,
    platformUserId,
    orgUserId,
    tripId,
    os: 'android',
    startTime: new Date(start).toISOString(),
    endTime: new Date(start + TRIP_SECONDS * 1000).toISOString(),
    points,
    events: [
      {
        type: 'brake',
        startTime: new Date(start + 600_000).toISOString(),
        endTime: new Date(start + 603_000).toISOString(),
        startPoint: { lat: points[600]!.lat, lng: points[600]!.lng },
        endPoint: { lat: points[603]!.lat, lng: points[603]!.lng },
      },
    ],
  };
}

const generate = (ctx: BenchContext, config: LoadGeneratorConfig): Promise<LoadGeneratorResult> =>
  runGenerator(ctx, config, 'route');
