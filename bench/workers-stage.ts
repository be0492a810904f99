import { record, type BenchContext } from './context.js';
import { readMix, requestPaths } from './api-requests.js';
import { apiSnapshot, generate, generatorCpu, parseResult, smokeCheck } from './api-stage.js';
import { startCluster } from './cluster-server.js';
import { ensureBase } from './fixtures.js';
import { availableParallelism } from 'node:os';
import { climb, scalingCeiling, type LadderStep } from './ladder.js';
import { cpuBetween, treeCpu } from './process-cpu.js';
import { schedBetween, threadsOf } from './run-queue.js';

/** The product's figure: requests a second answered with a p99 under 10 ms. */
const MAX_P99_MS = 10;
/**
 * The ladder's rungs, requests a second (from 100: a shared machine under other work may not hold
 * 250). A step of 250 from 1,000 on: with steps of 500 and 1,000 the ratio of two ladders could only
 * be 1.33x, 1.5x, 1.67x or 2.0x around the rates this machine reaches, whatever lay between.
 */
const RATES = [100, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500, 2750, 3000, 3250, 3500, 3750, 4000];
/** Before the ladder, this rate untimed. */
const WARM_RATE = 250;
/** Untimed requests after a server starts (its code paths compiled, its first reads done), and before each rung. */
const START_WARMUP_SECONDS = 10;
const STEP_WARMUP_SECONDS = 2;
/** Goal: 2 workers answer at least this many times what 1 does on 2 cores. */
const MIN_SCALING = 1.7;
/** Ladders of each worker count, interleaved (1, 2, 1, 2), so that a change in the shared machine's load hits both. */
const ROUNDS = 2;

interface Ladder {
  workers: number;
  highest: number | null;
  /** Every rung: rate, p99, the API's CPU a request (all its processes), the generator's CPU. */
  steps: (LadderStep & {
    cpuUsPerRequest: number;
    primaryUsPerRequest: number;
    generator: string;
    generatorUsPerRequest: number;
    waits: string;
  })[];
}

/**
 * Workers: `serve.js --workers 1` and `--workers 2` on the api stage's snapshot and its mix of
 * operations 1-4; an open-loop rate ladder for each (bench/ladder.ts) gives the highest rate with
 * a p99 under 10 ms, and the CPU of every process of the server (primary and workers, from
 * /proc) over each rung gives its CPU a request.
 */
export async function benchWorkers(ctx: BenchContext): Promise<void> {
  const { apiKey } = await ensureBase(ctx);
  const snapshot = await apiSnapshot(ctx);
  const byOp = await requestPaths(snapshot.dir, ctx.day, ctx.options.seed);
  const paths = readMix(byOp);
  const ladders: Ladder[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const workers of [1, 2]) {
      const ladder = await runLadder(ctx, snapshot.dir, apiKey, byOp, paths, workers);
      ladders.push(ladder);
      record(ctx, {
        stage: 'workers',
        metric: `round ${round}, ${workers} worker(s): highest rate with p99 < ${MAX_P99_MS} ms (rungs: rate p99 ms / CPU us a request)`,
        value: `${ladder.highest ?? `none (below ${RATES[0]})`} req/s (${ladder.steps.map((s) => `${s.rate}: ${s.p99Ms.toFixed(1)} / ${Math.round(s.cpuUsPerRequest)}${s.failed > 0 ? ` ${s.failed} failed` : ''}`).join('; ')})`,
        unit: '',
      });
    }
    for (const ladder of ladders.slice(-2)) {
      record(ctx, {
        stage: 'workers',
        metric: `round ${round}, ${ladder.workers} worker(s): waiting for a core, ms a second of each rung (the event loops' threads summed / the server's other threads: V8's GC and compiler helpers, libuv's pool)${ladder.workers > 1 ? "; each worker's share of the workers' CPU" : ''}`,
        value: ladder.steps.map((s) => `${s.rate}: ${s.waits}`).join('; '),
        unit: '',
      });
    }
    const [one, two] = ladders.slice(-2) as [Ladder, Ladder];
    // the CPU a request compared at the highest rung both ran (at a low rate, idle work weighs on each request)
    const common = Math.max(...one.steps.map((s) => s.rate).filter((rate) => two.steps.some((t) => t.rate === rate)));
    for (const ladder of [one, two]) {
      const at = ladder.steps.filter((s) => s.rate === common);
      const us = at.map(
        (s) =>
          `${Math.round(s.cpuUsPerRequest)}${ladder.workers > 1 ? ` (primary ${Math.round(s.primaryUsPerRequest)})` : ''}`,
      );
      record(ctx, {
        stage: 'workers',
        metric: `round ${round}, ${ladder.workers} worker(s): the API's CPU a request @ ${common}/s, primary + workers (each run of the rung; load generator: ${at[0]?.generator})`,
        value: us.join(', '),
        unit: 'us',
      });
    }
    const ceiling = ceilingOf(one);
    if (ceiling) {
      record(ctx, {
        stage: 'workers',
        metric: `round ${round}: the most 2 workers can answer over 1 at full load, from CPU alone, the load generator on the same ${availableParallelism()} cores: cores x s / (s + g), at 1 worker's top rung`,
        value: `${ceiling.ratio.toFixed(2)}x (s = ${Math.round(ceiling.serverUs)} us the server's CPU a request, g = ${Math.round(ceiling.generatorUs)} us the generator's, @ ${ceiling.rate}/s)`,
        unit: '',
      });
    }
    if (one.highest !== null && two.highest !== null) {
      const scaling = two.highest / one.highest;
      record(ctx, {
        stage: 'workers',
        metric: `round ${round}: 2 workers / 1 worker, highest rate with p99 < ${MAX_P99_MS} ms (the load generator shares the 2 cores)`,
        value: Math.round(scaling * 100) / 100,
        unit: 'x',
        target: `>= ${MIN_SCALING}x`,
        met: scaling >= MIN_SCALING,
      });
    }
  }
}

async function runLadder(
  ctx: BenchContext,
  dir: string,
  apiKey: string,
  byOp: Map<string, string[]>,
  paths: string[],
  workers: number,
): Promise<Ladder> {
  const server = await startCluster(ctx, dir, workers);
  const steps: Ladder['steps'] = [];
  try {
    await smokeCheck(server.url, apiKey, byOp);
    const connections = ctx.options.sizes.apiConnections;
    // the raw client: the generator shares the 2 cores with the workers, and undici costs more CPU
    const client = 'net';
    parseResult(
      await generate(ctx, {
        url: server.url,
        apiKey,
        paths,
        rate: WARM_RATE,
        seconds: START_WARMUP_SECONDS,
        connections,
        client,
      }).done,
    );
    const result = await climb(
      RATES,
      async (rate) => {
        const before = treeCpu(server.pid);
        const threadsBefore = threadsOf(before.keys());
        const startedAt = performance.now();
        const run = await generate(ctx, {
          url: server.url,
          apiKey,
          paths,
          rate,
          seconds: ctx.options.sizes.apiSeconds,
          connections,
          warmupSeconds: STEP_WARMUP_SECONDS,
          client,
        }).done;
        const after = treeCpu(server.pid);
        const waits = `${describeWaits(schedBetween(threadsBefore, threadsOf(after.keys())), (performance.now() - startedAt) / 1000)}${workers > 1 ? `, CPU split ${workerSplit(before, after, server.pid)}` : ''}`;
        const cpu = cpuBetween(before, after);
        const r = parseResult(run);
        if (cpu.processes !== workers + (workers > 1 ? 1 : 0))
          throw new Error(
            `the server had ${cpu.processes} process(es) through a rung, not ${workers} worker(s) and their primary`,
          );
        // the primary's own part (it hands connections to the workers; it answers nothing)
        const primary = workers > 1 ? (after.get(server.pid) ?? 0) - (before.get(server.pid) ?? 0) : 0;
        const step = {
          rate,
          p99Ms: r.p99Ms,
          throughput: r.throughput,
          failed: r.errors + r.timeouts + r.non2xx,
          cpuUsPerRequest: (cpu.seconds * 1e6) / Math.max(r.sent, 1),
          primaryUsPerRequest: (primary * 1e6) / Math.max(r.sent, 1),
          generator: generatorCpu(run, r),
          // its CPU from the first request to the last answer (Node's start left out) over the requests it sent
          generatorUsPerRequest: (r.cpuSecondsSending * 1e6) / Math.max(r.sent, 1),
          waits,
        };
        ctx.progress(
          `bench: workers: ${workers} worker(s) @ ${rate}/s: p99 ${r.p99Ms.toFixed(2)} ms, ${Math.round(r.throughput)} req/s, ${step.failed} failed, ${Math.round(step.cpuUsPerRequest)} us CPU a request (${step.generator}); ${waits}`,
        );
        steps.push(step);
        return step;
      },
      MAX_P99_MS,
    );
    return { workers, highest: result.highest, steps };
  } finally {
    ctx.children.push(await server.stop());
  }
}

/**
 * scalingCeiling (bench/ladder.ts) from the one-worker ladder's top rung, its runs averaged: there
 * the fixed cost of an idle server weighs least on each request.
 */
function ceilingOf(one: Ladder): { ratio: number; serverUs: number; generatorUs: number; rate: number } | null {
  const rate = Math.max(...one.steps.map((s) => s.rate));
  const top = one.steps.filter((s) => s.rate === rate);
  if (top.length === 0) return null;
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const serverUs = mean(top.map((s) => s.cpuUsPerRequest));
  const generatorUs = mean(top.map((s) => s.generatorUsPerRequest));
  return { ratio: scalingCeiling(availableParallelism(), 2, serverUs, generatorUs), serverUs, generatorUs, rate };
}

/**
 * A rung's time runnable but not running (bench/run-queue.ts), a second of the rung, as `main
 * W / other W ms/s`: a tail the server's CPU does not explain shows here when the two cores were
 * held by someone else.
 */
function describeWaits(spent: ReturnType<typeof schedBetween>, seconds: number): string {
  const perSecond = (ms: number): string => (ms / Math.max(seconds, 1e-3)).toFixed(0);
  return `main ${perSecond(spent.main.waitMs)} / other ${perSecond(spent.other.waitMs)} ms/s waited`;
}

/**
 * Each worker's share of what the workers spent over a rung, in percent, largest first (`58/42%`).
 * The primary hands each new connection to the next free worker and a kept-alive connection stays
 * with its worker, so the requests need not split evenly: the worker with the larger share reaches
 * its limit first.
 */
function workerSplit(before: Map<number, number>, after: Map<number, number>, primaryPid: number): string {
  const spent = [...after]
    .filter(([pid]) => pid !== primaryPid && before.has(pid))
    .map(([pid, end]) => end - (before.get(pid) ?? 0));
  const total = spent.reduce((a, b) => a + b, 0);
  if (total <= 0) return '-';
  return `${spent
    .sort((a, b) => b - a)
    .map((s) => Math.round((100 * s) / total))
    .join('/')}%`;
}
