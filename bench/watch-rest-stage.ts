import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/config.js';
import { addDays } from '../src/time.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, startNodeChild } from './child.js';
import { historyDir } from './fixtures.js';
import { requestPaths } from './api-requests.js';
import { generate, parseResult } from './api-stage.js';
import { startCluster } from './cluster-server.js';
import { UploadMaker, UploadRun, issueTokens } from './watch-uploads.js';
import {
  CPU_RATIO,
  LIST_P99_MS,
  PEAK_LIST_RATE,
  PEAK_P99_S,
  PEAK_UPLOADS_PER_S,
  nightlyLoad,
  tripTemplates,
  waitLandingEmpty,
} from './watch-stage.js';

/** The rests measured (`load.js --watch --rest R`); 2 is the default. */
const RESTS = [0, 1, 2, 4] as const;
const HISTORY_DAYS = 7;
const UPLOAD_USERS = 200;

/**
 * The continuous load's knob, measured: for each `--rest`, a fresh copy of the same history, the
 * API (2 workers) and `load.js --watch --rest R`, and a 100,000-driver day's peak (10 one-trip
 * uploads a second of 1,500 points) for `peakSeconds` under 500 trip lists a second. Per rest: the
 * watch's CPU a trip (the whole process, start to SIGTERM), its lag from arrival to switch (its own
 * histogram), its batches, and the trip list's p99; then the same uploads, as the API landed them,
 * loaded by one plain `load.js` in another copy (its whole process too): the CPU a trip the watch
 * spends over what one nightly load of the same trips would.
 */
export async function benchWatchRest(ctx: BenchContext): Promise<void> {
  const peakSeconds = ctx.options.size === 'full' ? 120 : 60;
  const history = await historyDir(ctx, 'watch-rest', HISTORY_DAYS, addDays(ctx.day, -1));
  const base = ctx.base as NonNullable<BenchContext['base']>;
  const templates = await tripTemplates(ctx);
  const users = base.users.slice(0, Math.min(UPLOAD_USERS, base.users.length)).map((u) => u.orgUserId);
  const listPaths = (await requestPaths(history.dir, ctx.day, ctx.options.seed)).get('1 trip list') ?? [];
  for (const rest of RESTS) {
    const dir = join(ctx.options.workDir, `watch-rest-${rest}`);
    const nightlyDir = `${dir}-nightly`;
    for (const d of [dir, nightlyDir]) {
      rmSync(d, { recursive: true, force: true });
      cpSync(history.dir, d, { recursive: true });
    }
    ctx.progress(
      `bench: watch-rest: --rest ${rest}: ${PEAK_UPLOADS_PER_S} uploads/s for ${peakSeconds} s under ${PEAK_LIST_RATE} trip lists/s`,
    );
    const server = await startCluster(ctx, dir, 2, { env: { DRIVING_API_RATE_PER_TOKEN: '100000' } });
    try {
      const tokens = await issueTokens(server.url, base.apiKey, users);
      const metricsDir = join(ctx.options.workDir, `watch-rest-${rest}-metrics`);
      mkdirSync(metricsDir, { recursive: true });
      const watcher = startNodeChild(
        `load --watch --rest ${rest}`,
        jobScript(ctx, 'load'),
        ['--data-dir', dir, '--watch', '--json', '--rest', String(rest), '--metrics-dir', metricsDir],
        childOptions(ctx, false),
      );
      await sleep(3_000);
      const lists = generate(ctx, {
        url: server.url,
        apiKey: base.apiKey,
        paths: listPaths,
        rate: PEAK_LIST_RATE,
        seconds: 0,
        connections: 50,
        warmupSeconds: 2,
      });
      await sleep(3_000);
      const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `rest${rest}-${Date.now().toString(36)}`);
      const uploads = new UploadRun(server.url, base.apiKey, tokens, false);
      await uploads.send(() => maker.make(templates.peak, users), PEAK_UPLOADS_PER_S, peakSeconds * PEAK_UPLOADS_PER_S);
      const sent = await uploads.finish();
      await waitLandingEmpty(pathsFor(dir).landingDir, 120_000);
      lists.child.send({ stop: true });
      const listRun = parseResult(await lists.done);
      // the batch in hand ends, then the watch: its whole process's CPU, as the nightly load's
      watcher.child.kill('SIGTERM');
      const watchRun = await watcher.done;
      ctx.children.push(watchRun);
      const watch = jobJson(watchRun) as {
        batches: number;
        failedBatches: number;
        tripsLoaded: number;
        lagP50Seconds: number | null;
        lagP99Seconds: number | null;
      };
      if (watchRun.cpuSeconds === null) throw new Error("the watch's CPU was not recorded");
      const nightly = await nightlyLoad(ctx, pathsFor(dir).landingDir, nightlyDir);
      const watchPerTrip = (watchRun.cpuSeconds / Math.max(1, watch.tripsLoaded)) * 1000;
      const nightlyPerTrip = (nightly.cpuSeconds / Math.max(1, nightly.trips)) * 1000;
      const ratio = watchPerTrip / nightlyPerTrip;
      const lagP99 = watch.lagP99Seconds ?? Number.POSITIVE_INFINITY;
      const listFailed = listRun.errors + listRun.timeouts + listRun.non2xx;
      record(ctx, {
        stage: 'watch-rest',
        metric: `--rest ${rest}, peak ${PEAK_UPLOADS_PER_S} uploads/s of 1,500 points for ${peakSeconds} s: CPU a trip, watch / nightly (${watchPerTrip.toFixed(1)} ms in ${watch.batches} batches, ${watch.tripsLoaded.toLocaleString('en-US')} trips of ${sent.accepted.toLocaleString('en-US')} uploads; ${nightlyPerTrip.toFixed(1)} ms in one load)`,
        value: Math.round(ratio * 100) / 100,
        unit: '×',
        target: `<= ${CPU_RATIO}`,
        met: ratio <= CPU_RATIO && watch.failedBatches === 0,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `--rest ${rest}, the same peak: lag from arrival to switch (the watch's histogram), p50 / p99`,
        value: `${fmt(watch.lagP50Seconds)} / ${fmt(watch.lagP99Seconds)}`,
        unit: 's',
        target: `p99 <= ${PEAK_P99_S} s`,
        met: lagP99 <= PEAK_P99_S,
      });
      record(ctx, {
        stage: 'watch-rest',
        metric: `--rest ${rest}, the same peak: trip list @ ${PEAK_LIST_RATE}/s meanwhile, p99 (p50; failed)`,
        value: listRun.p99Ms,
        unit: `ms (${listRun.p50Ms.toFixed(2)} ms; ${listFailed} failed)`,
        target: `< ${LIST_P99_MS} ms`,
        met: listRun.p99Ms < LIST_P99_MS && listFailed === 0,
      });
    } finally {
      ctx.children.push(await server.stop());
    }
    for (const d of [dir, nightlyDir]) if (!ctx.options.keep) rmSync(d, { recursive: true, force: true });
  }
}

const fmt = (v: number | null): string => (v === null ? '-' : v.toFixed(2));

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
