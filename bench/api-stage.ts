import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childOptions, jobScript, record, type BenchContext, type Snapshot } from './context.js';
import { jobJson, runNodeChild, startNodeChild, type ChildResult, type RunningChild } from './child.js';
import { ensureBase, historyDir } from './fixtures.js';
import { historySnapshot } from './score-stage.js';
import { OPERATIONS, mixedPaths, requestPaths } from './api-requests.js';
import { servedSnapshot, startApiServer, waitPageCache } from './api-server.js';
import type { LoadGeneratorConfig, LoadGeneratorResult } from './load-generator.js';

/** Targets: p99 under 10 ms at 1,000 requests/s for every operation; no failed request. */
const MAX_P99_MS = 10;
const P99_AT_RATE = 1000;
/** Each measured run is preceded by this much at its rate, not counted (the generator's start-up; bench/load-generator.ts). */
const WARMUP_SECONDS = 2;

/**
 * An operation's untimed warm-up: at least WARMUP_SECONDS, and long enough to send each of its
 * paths once, so the timed run measures a server whose answers are in memory, not the first read
 * of each sampled user. This machine's host reclaims page cache not read for about a minute (a
 * DAMON pageout scheme), so the pages the server read at start are partly gone by the time a later
 * operation runs: after a short warm-up its p99 measures the page cache refilling, not the server
 * (docs/benchmarks.md).
 */
export function warmupSeconds(paths: number, rate: number): number {
  return Math.max(WARMUP_SECONDS, Math.ceil(paths / rate));
}
/** A run that did not reach its rate measured a server that fell behind, not the rate asked for. */
const MIN_RATE_SHARE = 0.95;
/** Average trips per user and day (measured on the generator's and the synthesizer's output). */
const TRIPS_PER_USER_DAY = 1.45;

const GENERATOR = fileURLToPath(new URL('./load-generator.js', import.meta.url));

/**
 * API: the real `serve.js` over a scored snapshot of at least `apiTrips` trips; the open-loop load generator in its
 * own process at each rate for each of the trip list, detail, statistics and score, then all four mixed at the highest rate
 * while `score.js` publishes a new version under it.
 */
export async function benchApi(ctx: BenchContext): Promise<void> {
  const { apiKey } = await ensureBase(ctx);
  const snapshot = await apiSnapshot(ctx);
  const paths = await requestPaths(snapshot.dir, ctx.day, ctx.options.seed);
  const { apiRates: rates, apiSeconds: seconds, apiConnections: connections } = ctx.options.sizes;
  const server = await startApiServer(ctx, snapshot.dir);
  try {
    const cache = await waitPageCache(server.url, ctx.progress);
    record(ctx, {
      stage: 'api',
      metric: 'serve: serving pack read into the page cache before the runs (src/serving/warm.ts)',
      value: cache.state === 'warm' ? `warm ${cache.seconds} s after the server was ready` : cache.state,
      unit: '',
    });
    await smokeCheck(server.url, apiKey, paths);
    ctx.progress(`bench: api: ${snapshot.trips.toLocaleString('en-US')} trips served at ${server.url}; warming up`);
    await generate(ctx, {
      url: server.url,
      apiKey,
      paths: mixedPaths(paths),
      rate: Math.min(...rates),
      seconds: 3,
      connections,
    }).done;
    // the floor: what the machine and the load generator alone give at each rate (no auth, no data, no read)
    for (const rate of rates) {
      const r = parseResult(
        await generate(ctx, {
          url: server.url,
          apiKey,
          paths: ['/healthz'],
          rate,
          seconds,
          connections,
          warmupSeconds: WARMUP_SECONDS,
        }).done,
      );
      record(ctx, {
        stage: 'api',
        metric: `floor: GET /healthz @ ${rate}/s: p50 / p99 / max (the harness and the machine alone)`,
        value: `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} / ${r.maxMs.toFixed(1)} ms`,
        unit: '',
      });
    }
    for (const op of OPERATIONS) {
      for (const rate of rates) {
        const opPaths = paths.get(op) ?? [];
        const run = await generate(ctx, {
          url: server.url,
          apiKey,
          paths: opPaths,
          rate,
          seconds,
          connections,
          warmupSeconds: warmupSeconds(opPaths.length, rate),
        }).done;
        const r = parseResult(run);
        const failed = r.errors + r.timeouts + r.non2xx;
        const rateReached = r.throughput >= MIN_RATE_SHARE * rate;
        record(ctx, {
          stage: 'api',
          metric: `op ${op} @ ${rate}/s: p99 (from each request's due time)`,
          value: r.p99Ms,
          unit: 'ms',
          ...(rate >= P99_AT_RATE
            ? { target: `< ${MAX_P99_MS} ms at the rate`, met: rateReached && r.p99Ms < MAX_P99_MS }
            : {}),
        });
        record(ctx, {
          stage: 'api',
          metric: `op ${op} @ ${rate}/s: p50 / req/s / failed (load generator: CPU, its loop delay)`,
          value: `${r.p50Ms.toFixed(2)} ms / ${Math.round(r.throughput)} / ${failed}${statusNote(r)} (${generatorCpu(run, r)})`,
          unit: '',
          target: `>= ${Math.round(MIN_RATE_SHARE * rate)} req/s, 0 failed`,
          met: rateReached && failed === 0,
        });
      }
    }
    // at each rate: at a rate the server cannot keep up with, unanswered requests are overload, and
    // only the lower rate tells whether the switch itself fails anything
    for (const rate of rates) await duringPublish(ctx, server.url, apiKey, mixedPaths(paths), snapshot, rate);
  } finally {
    ctx.children.push(await server.stop());
  }
}

/** All four operations mixed at `rate`, from before a publish until after the switch. */
async function duringPublish(
  ctx: BenchContext,
  url: string,
  apiKey: string,
  paths: string[],
  snapshot: Snapshot,
  rate: number,
): Promise<void> {
  const load = generate(ctx, {
    url,
    apiKey,
    paths,
    rate,
    seconds: 0,
    connections: ctx.options.sizes.apiConnections,
    warmupSeconds: 1,
  });
  await sleep(2_000);
  const before = await servedSnapshot(url);
  const job = await runNodeChild(
    'score under api load',
    jobScript(ctx, 'score'),
    ['--data-dir', snapshot.dir, '--date', ctx.scoreDate, '--json'],
    childOptions(ctx),
  );
  ctx.children.push(job);
  jobJson(job);
  // the API polls the manifest every 250 ms, then opens and warms the new slot
  let after = before;
  for (let waited = 0; after === before && waited < 30_000; waited += 250) {
    await sleep(250);
    after = await servedSnapshot(url);
  }
  await sleep(2_000);
  load.child.send({ stop: true });
  const r = parseResult(await load.done);
  // unanswered requests count as failed (the generator waits for them, then gives up)
  const failed = r.errors + r.timeouts + r.non2xx;
  record(ctx, {
    stage: 'api',
    metric: `publish (score.js, ${job.wallSeconds.toFixed(1)} s) under mixed ops @ ${rate}/s: failed requests (errors / non-2xx / unanswered)`,
    value: failed,
    unit: `of ${r.sent} sent (${r.errors} / ${r.non2xx} / ${r.timeouts})${statusNote(r)}`,
    target: '0',
    met: failed === 0,
  });
  record(ctx, {
    stage: 'api',
    metric: `during publish @ ${rate}/s: p50 / p99 / req/s`,
    value: `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms / ${Math.round(r.throughput)}`,
    unit: '',
  });
  record(ctx, {
    stage: 'api',
    metric: `during publish @ ${rate}/s: snapshot switched`,
    value: `${before} -> ${after}`,
    unit: '',
    target: 'switched',
    met: after !== before,
  });
}

/** A scored snapshot with at least `apiTrips` trips: the score stage's when it is big enough. */
export async function apiSnapshot(ctx: BenchContext): Promise<Snapshot> {
  const { users, historyDays, apiTrips } = ctx.options.sizes;
  const existing = ctx.historySnapshot;
  const expected = existing?.trips ?? Math.floor(users * historyDays * TRIPS_PER_USER_DAY);
  let snapshot: Snapshot;
  if (expected >= apiTrips) snapshot = await historySnapshot(ctx);
  else {
    const days = Math.ceil(apiTrips / (users * TRIPS_PER_USER_DAY));
    const built = await historyDir(ctx, 'api', days, ctx.day);
    snapshot = { dir: built.dir, trips: built.trips, scored: false };
  }
  if (!snapshot.scored) {
    const run = await runNodeChild(
      'score (api setup)',
      jobScript(ctx, 'score'),
      ['--data-dir', snapshot.dir, '--date', ctx.scoreDate, '--json'],
      childOptions(ctx),
    );
    ctx.children.push(run);
    jobJson(run);
    record(ctx, { stage: 'setup', metric: 'score the api snapshot', value: run.wallSeconds, unit: 's' });
    snapshot.scored = true;
  }
  record(ctx, {
    stage: 'api',
    metric: 'snapshot served',
    value: snapshot.trips,
    unit: 'trips',
    target: `>= ${apiTrips.toLocaleString('en-US')}`,
    met: snapshot.trips >= apiTrips,
  });
  return snapshot;
}

/** One request of each operation must succeed before anything is timed. */
export async function smokeCheck(url: string, apiKey: string, paths: Map<string, string[]>): Promise<void> {
  for (const [op, list] of paths) {
    const path = list[0] as string;
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (res.status !== 200)
      throw new Error(`op ${op}: GET ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  }
}

export function generate(ctx: BenchContext, config: LoadGeneratorConfig): RunningChild {
  const file = join(ctx.options.workDir, 'load-generator.json');
  writeFileSync(file, JSON.stringify(config));
  return startNodeChild(`load generator @${config.rate}/s`, GENERATOR, [file], { ...childOptions(ctx), ipc: true });
}

export function parseResult(run: {
  stdout: string;
  exitCode: number | null;
  stderrTail: string[];
}): LoadGeneratorResult {
  const line = run.stdout.trim().split('\n').pop() ?? '';
  if (run.exitCode !== 0 || !line.startsWith('{'))
    throw new Error(`load generator exited ${run.exitCode}: ${run.stderrTail.slice(-3).join(' | ')}`);
  return JSON.parse(line) as LoadGeneratorResult;
}

/** The load generator shares the two cores with the server: how much of one core it took, and how late its own loop ran. */
export function generatorCpu(run: ChildResult, r: LoadGeneratorResult): string {
  const cpu = run.cpuSeconds === null ? 'cpu ?' : `${Math.round((100 * run.cpuSeconds) / r.totalSeconds)}% of a core`;
  // its own event-loop delay: a high one means the generator, not the server, added latency
  return `${cpu}, loop delay p99 ${r.loopDelayP99Ms.toFixed(1)} ms`;
}

function statusNote(r: LoadGeneratorResult): string {
  const other = Object.entries(r.statusCodes).filter(([code]) => code !== '200');
  return other.length > 0 ? ` (${other.map(([code, n]) => `${n}x ${code}`).join(', ')})` : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
