import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../src/apps/store.js';
import { runGenerate } from '../src/jobs/generate.js';
import { runLoad } from '../src/jobs/load.js';
import { runScore } from '../src/jobs/score.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { startNodeChild } from './child.js';
import { mixedPaths, requestPaths } from './api-requests.js';
import { generate, parseResult } from './api-stage.js';
import { cpuSeconds } from './process-cpu.js';
/** Drivers and days of the stage's own small data folder: the cost measured is per request, not per byte. */
const USERS = 100;
const DAYS = 7;
/** Low enough that a busy shared 2-core machine answers every request (CPU a request is the measure, not speed). */
const RATE = 100;
const SECONDS = 10;
/** A scrape every 5 s: three times the 15 s of deploy/prometheus/scrape.yml. Each scrape costs the same whatever the rate, so at a low rate a shorter interval would count mostly the scrapes. */
const SCRAPE_MS = 5_000;
/** Runs of each variant, interleaved (off, on, off, on, ...), so that a change in the shared machine's load hits both. */
const ROUNDS = 3;
/** The goal: metrics add at most this share of CPU per request. */
const MAX_EXTRA = 0.05;

/**
 * Metrics: the API's CPU per request with metrics off (`--no-metrics`) and on (`--metrics-port 0`,
 * Prometheus scraping /metrics every 5 s, three times as often as deployed), the same mixed
 * requests of the trip list, detail, statistics and score at one rate. The server's CPU is read from /proc/<pid>/stat around
 * each timed run only (its start, snapshot open and warm-up are not counted).
 */
export async function benchMetrics(ctx: BenchContext): Promise<void> {
  const dir = join(ctx.options.workDir, 'metrics');
  rmSync(dir, { recursive: true, force: true });
  const app = await new AppStore(join(dir, 'apps.json')).add({ name: 'Bench Metrics', timeZone: 'Europe/Berlin' });
  await runGenerate({ dataDir: dir, users: USERS, days: DAYS, seed: ctx.options.seed, endDate: ctx.day });
  await runLoad({ dataDir: dir });
  await runScore({ dataDir: dir, date: ctx.scoreDate });
  const paths = mixedPaths(await requestPaths(dir, ctx.day, ctx.options.seed));
  const perRequest: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of ['off', 'on'] as const) {
      const us = await oneRun(ctx, dir, app.apiKey, paths, variant);
      perRequest[variant].push(us);
      ctx.progress(`bench: metrics: round ${round + 1} ${variant}: ${us.toFixed(1)} us CPU a request`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const off = median(perRequest.off);
  const on = median(perRequest.on);
  record(ctx, {
    stage: 'metrics',
    metric: `API CPU a request, metrics off (median of ${ROUNDS}; each run: ${perRequest.off.map((x) => x.toFixed(1)).join(', ')})`,
    value: Math.round(off * 10) / 10,
    unit: 'us',
  });
  record(ctx, {
    stage: 'metrics',
    metric: `API CPU a request, metrics on, scraped every ${SCRAPE_MS / 1000} s (median of ${ROUNDS}; each run: ${perRequest.on.map((x) => x.toFixed(1)).join(', ')})`,
    value: Math.round(on * 10) / 10,
    unit: 'us',
  });
  record(ctx, {
    stage: 'metrics',
    metric: `metrics' share of the API's CPU a request (mixed ops 1-4 @ ${RATE}/s, ${SECONDS} s)`,
    value: Math.round((on / off - 1) * 1000) / 10,
    unit: '%',
    target: `<= ${MAX_EXTRA * 100}%`,
    met: on / off - 1 <= MAX_EXTRA,
  });
}

async function oneRun(
  ctx: BenchContext,
  dir: string,
  apiKey: string,
  paths: string[],
  variant: 'off' | 'on',
): Promise<number> {
  let resolveUrl: (url: string) => void = () => undefined;
  let resolveMetrics: (url: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => (resolveUrl = resolve));
  const metricsAt = new Promise<string>((resolve) => (resolveMetrics = resolve));
  const flags = variant === 'on' ? ['--metrics-port', '0'] : ['--no-metrics'];
  const server = startNodeChild(
    `serve metrics ${variant}`,
    jobScript(ctx, 'serve'),
    ['--data-dir', dir, '--port', '0', '--no-log', ...flags],
    {
      ...childOptions(ctx, false),
      // no shedding on event-loop lag: on a shared machine it would refuse a varying share of requests
      env: { DRIVING_API_MAX_EVENT_LOOP_DELAY_MS: '0' },
      onStderrLine: (line) => {
        const api = /listening on (http:\/\/\S+)/.exec(line);
        if (api) resolveUrl(api[1] as string);
        const metrics = /metrics on (http:\/\/\S+)/.exec(line);
        if (metrics) resolveMetrics(metrics[1] as string);
      },
    },
  );
  try {
    const url = await listening;
    const scrapeUrl = variant === 'on' ? await metricsAt : null;
    // warm: every path once, untimed
    parseResult(
      await generate(ctx, {
        url,
        apiKey,
        paths,
        rate: RATE,
        seconds: Math.max(2, Math.ceil(paths.length / RATE)),
        connections: 50,
      }).done,
    );
    const scrapes = scrapeUrl
      ? setInterval(
          () =>
            void fetch(scrapeUrl)
              .then((r) => r.text())
              .catch(() => undefined),
          SCRAPE_MS,
        )
      : null;
    const before = cpuSeconds(server.child.pid as number);
    const result = parseResult(
      await generate(ctx, { url, apiKey, paths, rate: RATE, seconds: SECONDS, connections: 50 }).done,
    );
    const cpu = cpuSeconds(server.child.pid as number) - before;
    if (scrapes) clearInterval(scrapes);
    // a request the overloaded machine did not see answered still cost CPU: counted, and said
    const failed = result.errors + result.timeouts + result.non2xx;
    if (failed > result.requests / 100)
      ctx.progress(
        `bench: metrics: ${variant}: ${failed} request(s) failed (${result.errors} errors, ${result.timeouts} unanswered, statuses ${JSON.stringify(result.statusCodes)})`,
      );
    return (cpu * 1e6) / result.requests;
  } finally {
    server.child.kill('SIGTERM');
    ctx.children.push(await server.done);
  }
}
