import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { addDays } from '../src/time.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, startNodeChild } from './child.js';
import { historyDir } from './fixtures.js';
import { requestPaths } from './api-requests.js';
import { parseResult } from './api-stage.js';
import { startCluster } from './cluster-server.js';
import { UploadMaker, UploadRun, issueTokens, quantile } from './watch-uploads.js';
import { cpuSeconds } from './process-cpu.js';
import {
  CPU_RATIO,
  DEMO_P50_S,
  DEMO_P99_S,
  LIST_P99_MS,
  PEAK_LIST_RATE,
  PEAK_P99_S,
  PEAK_UPLOADS_PER_S,
  archivedNames,
  nightlyLoad,
  peakLists,
  tripTemplates,
} from './watch-stage.js';

/** The watch counts the pace of arrivals over 30 s: after the peak it waits that long idle, so the demo's pace is its own. */
const PACE_CLEAR_MS = 35_000;
const DEMO_UPLOADS = 60;
const DEMO_USERS = 50;
const HISTORY_DAYS = 7;
const UPLOAD_USERS = 200;

/**
 * The continuous load's knob, measured: for each `--max-rest-ms`, a fresh copy of the same history,
 * the API (2 workers) and `load.js --watch --max-rest-ms R`. First a 100,000-driver day's peak (10
 * one-trip uploads a second of 1,500 points) for `peakSeconds` under 500 trip lists a second: the
 * lag from each upload's 202 to its first 200, the trip list's p99, and the watch's CPU a trip
 * (its process from the peak's first upload to its last trip served: a watch starts once, not once
 * a peak) against a plain `load.js` of the same uploads, as the API landed them, in another copy
 * (its whole process: a night's load starts every night). That load runs under the same 500 trip
 * lists a second, as the watch did: two processes busy on two cores each spend more CPU on the same
 * work, and the ratio is the watch's own cost. It runs again on the idle machine, as a night's
 * does: that ratio is printed, not written to the doc. Then uploads at the demo's pace, one a
 * second: the lag a quiet stream gets at that rest.
 */
export async function benchWatchRest(ctx: BenchContext): Promise<void> {
  const peakSeconds = ctx.options.size === 'full' ? 120 : 60;
  const history = await historyDir(ctx, 'watch-rest', HISTORY_DAYS, addDays(ctx.day, -1));
  const base = ctx.base as NonNullable<BenchContext['base']>;
  const templates = await tripTemplates(ctx);
  const users = base.users.slice(0, Math.min(UPLOAD_USERS, base.users.length)).map((u) => u.orgUserId);
  const demoUsers = users.slice(0, DEMO_USERS);
  const listPaths = (await requestPaths(history.dir, ctx.day, ctx.options.seed)).get('1 trip list') ?? [];
  for (const rest of ctx.options.watchRests) {
    const dir = join(ctx.options.workDir, `watch-rest-${rest}`);
    const nightlyDir = `${dir}-nightly`;
    const idleNightlyDir = `${dir}-nightly-idle`;
    for (const d of [dir, nightlyDir, idleNightlyDir]) {
      rmSync(d, { recursive: true, force: true });
      cpSync(history.dir, d, { recursive: true });
    }
    ctx.progress(
      `bench: watch-rest: --max-rest-ms ${rest}: ${PEAK_UPLOADS_PER_S} uploads/s for ${peakSeconds} s under ${PEAK_LIST_RATE} trip lists/s`,
    );
    const server = await startCluster(ctx, dir, 2, { env: { DRIVING_API_RATE_PER_TOKEN: '100000' } });
    try {
      const tokens = await issueTokens(server.url, base.apiKey, users);
      const metricsDir = join(ctx.options.workDir, `watch-rest-${rest}-metrics`);
      mkdirSync(metricsDir, { recursive: true });
      const watcher = startNodeChild(
        `load --watch --max-rest-ms ${rest}`,
        jobScript(ctx, 'load'),
        ['--data-dir', dir, '--watch', '--json', '--max-rest-ms', String(rest), '--metrics-dir', metricsDir],
        childOptions(ctx, false),
      );
      await sleep(3_000);
      const lists = await peakLists(ctx, server.url, base.apiKey, listPaths);
      const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `rest${rest}-${Date.now().toString(36)}`);
      const archivedBefore = archivedNames(pathsFor(dir).landingDir);
      const peak = new UploadRun(server.url, base.apiKey, tokens, true);
      const cpuAtPeak = cpuSeconds(watcher.child.pid as number);
      await peak.send(() => maker.make(templates.peak, users), PEAK_UPLOADS_PER_S, peakSeconds * PEAK_UPLOADS_PER_S);
      const peakLags = await peak.finish();
      lists.child.send({ stop: true });
      const listRun = parseResult(await lists.done);
      // every peak trip is served: the batch that served the last one ends within a moment
      await sleep(1_000);
      const watchCpu = cpuSeconds(watcher.child.pid as number) - cpuAtPeak;
      const peakFiles = new Set(
        [...archivedNames(pathsFor(dir).landingDir)].filter((name) => !archivedBefore.has(name)),
      );

      // then the demo's pace, one upload a second: the lag a quiet stream gets at this rest
      await sleep(PACE_CLEAR_MS);
      const demo = new UploadRun(server.url, base.apiKey, tokens, true);
      const demoCpuFrom = cpuSeconds(watcher.child.pid as number);
      const demoFrom = performance.now();
      await demo.send(() => maker.make(templates.whole, demoUsers), 1, DEMO_UPLOADS);
      const demoLags = await demo.finish();
      const demoCpu = cpuSeconds(watcher.child.pid as number) - demoCpuFrom;
      const demoSeconds = (performance.now() - demoFrom) / 1000;
      watcher.child.kill('SIGTERM');
      const watchRun = await watcher.done;
      ctx.children.push(watchRun);
      const watch = jobJson(watchRun) as { failedBatches: number };
      const nightlyLists = await peakLists(ctx, server.url, base.apiKey, listPaths);
      let nightly: Awaited<ReturnType<typeof nightlyLoad>>;
      try {
        nightly = await nightlyLoad(ctx, pathsFor(dir).landingDir, nightlyDir, peakFiles);
      } finally {
        nightlyLists.child.send({ stop: true });
        await nightlyLists.done;
      }
      const idleNightly = await nightlyLoad(ctx, pathsFor(dir).landingDir, idleNightlyDir, peakFiles);
      const peakTrips = peakLags.lagsMs.length;
      const watchPerTrip = (watchCpu / Math.max(1, peakTrips)) * 1000;
      const nightlyPerTrip = (nightly.cpuSeconds / Math.max(1, nightly.trips)) * 1000;
      const ratio = watchPerTrip / nightlyPerTrip;
      const idlePerTrip = (idleNightly.cpuSeconds / Math.max(1, idleNightly.trips)) * 1000;
      const listFailed = listRun.errors + listRun.timeouts + listRun.non2xx;
      const peakP99 = seconds(quantile(peakLags.lagsMs, 0.99));
      const demoP50 = seconds(quantile(demoLags.lagsMs, 0.5));
      const demoP99 = seconds(quantile(demoLags.lagsMs, 0.99));
      const label = `--max-rest-ms ${rest}`;
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: peak, CPU a trip, watch / nightly (${watchPerTrip.toFixed(1)} ms over ${peakTrips} trips in ${peakFiles.size} batch files; ${nightlyPerTrip.toFixed(1)} ms in one load of the same uploads under the same trip lists)`,
        value: Math.round(ratio * 100) / 100,
        unit: '×',
        target: `<= ${CPU_RATIO}`,
        met: ratio <= CPU_RATIO && watch.failedBatches === 0,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: peak, CPU a trip, watch / the same nightly load on the idle machine (${idlePerTrip.toFixed(1)} ms)`,
        value: Math.round((watchPerTrip / idlePerTrip) * 100) / 100,
        unit: '×',
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: peak, upload (202) to served, p50 / p99 (never served; failed uploads)`,
        value: `${fmt(seconds(quantile(peakLags.lagsMs, 0.5)))} / ${fmt(peakP99)}`,
        unit: `s (${peakLags.unserved}; ${peakLags.failed})`,
        target: `p99 <= ${PEAK_P99_S} s`,
        met: peakP99 !== null && peakP99 <= PEAK_P99_S && peakLags.unserved === 0 && peakLags.failed === 0,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: peak, trip list @ ${PEAK_LIST_RATE}/s meanwhile, p99 (p50; failed)`,
        value: listRun.p99Ms,
        unit: `ms (${listRun.p50Ms.toFixed(2)} ms; ${listFailed} failed)`,
        target: `< ${LIST_P99_MS} ms`,
        met: listRun.p99Ms < LIST_P99_MS && listFailed === 0,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: ${DEMO_UPLOADS} uploads at 1/s after the peak, upload (202) to served, p50 / p99`,
        value: `${fmt(demoP50)} / ${fmt(demoP99)}`,
        unit: 's',
        target: `<= ${DEMO_P50_S} / ${DEMO_P99_S} s`,
        met: demoP50 !== null && demoP99 !== null && demoP50 <= DEMO_P50_S && demoP99 <= DEMO_P99_S,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `${label}: the same ${DEMO_UPLOADS} uploads, the watch's CPU a trip (its share of a core meanwhile)`,
        value: Math.round((demoCpu / Math.max(1, demoLags.lagsMs.length)) * 1000),
        unit: `ms (${Math.round((demoCpu / demoSeconds) * 100)}%)`,
        doc: true,
      });
    } finally {
      ctx.children.push(await server.stop());
    }
    for (const d of [dir, nightlyDir, idleNightlyDir])
      if (!ctx.options.keep) rmSync(d, { recursive: true, force: true });
  }
}

const fmt = (v: number | null): string => (v === null ? '-' : v.toFixed(2));
const seconds = (ms: number | null): number | null => (ms === null ? null : ms / 1000);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
