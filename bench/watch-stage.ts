import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isSdkUploadFile, uploadFileName } from '../src/load/uploads.js';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { generateTrips } from '../src/generate/generate.js';
import type { TripRecord } from '../src/generate/types.js';
import { readManifest } from '../src/publish/manifest.js';
import { watchMetricsFile } from '../src/metrics/watch-textfile.js';
import { addDays } from '../src/time.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild, startNodeChild, type ChildResult } from './child.js';
import { dropDataDir, historyDir } from './fixtures.js';
import { requestPaths } from './api-requests.js';
import { generate, parseResult, warmupSeconds } from './api-stage.js';
import { startCluster } from './cluster-server.js';
import type { ApiServer } from './api-server.js';
import { cpuBetween, treeCpu } from './process-cpu.js';
import {
  UploadMaker,
  UploadRun,
  cutTrip,
  issueTokens,
  quantile,
  readTemplates,
  type LagSummary,
} from './watch-uploads.js';

/** How much the stage does at each size: the demo's drivers and uploads, the peak's length, the publishes before the comparison. */
interface WatchPlan {
  /** Drivers uploading in the demo-sized run (the demo has 10-50). */
  demoUsers: number;
  demoUploads: number;
  /** Drivers uploading at the peak and in the run of small publishes (a token each). */
  uploadUsers: number;
  /** Days of nightly-loaded history behind the uploads. */
  historyDays: number;
  peakSeconds: number;
  /** Publishes by the watch (the demo's and the peak's included) before the serving pack is compared with a nightly load's, or `--watch-seconds` of small uploads. */
  publishes: number;
}

const PLANS: Readonly<Record<'small' | 'full', WatchPlan>> = {
  small: { demoUsers: 50, demoUploads: 150, uploadUsers: 200, historyDays: 7, peakSeconds: 60, publishes: 1000 },
  full: { demoUsers: 50, demoUploads: 200, uploadUsers: 1000, historyDays: 7, peakSeconds: 120, publishes: 1000 },
};

/** A 100,000-driver day: 150,000 uploads, peaks of 10 a second of about 1,500 points, while integrators ask 500 trip lists a second. */
export const PEAK_UPLOADS_PER_S = 10;
const PEAK_POINTS = 1_500;
export const PEAK_LIST_RATE = 500;
/** The small uploads that make the many publishes: a minute of points, no events. */
const TINY_POINTS = 60;
const TINY_UPLOADS_PER_S = 1;
/** The serving comparison's fixed rate and length. */
const COMPARE_RATE = 200;
const COMPARE_SECONDS = 20;
const COMPARE_ROUNDS = 5;
const DEMO_RATE = 1;

/** Targets (docs/benchmarks.md). */
export const DEMO_P50_S = 2;
export const DEMO_P99_S = 5;
export const PEAK_P99_S = 15;
export const LIST_P99_MS = 10;
const SERVE_RATIO = 1.1;
export const CPU_RATIO = 1.5;
/** Runs of the nightly load whose CPU is the baseline (their median). */
const NIGHTLY_RUNS = 3;

/**
 * The continuous load: `serve.js` (2 workers) and `load.js --watch` on a data folder with a few days
 * of nightly-loaded history; SDK uploads through the API, each asked for until it is served. A
 * demo-sized run at 1 upload a second, then a 100,000-driver day's peak (10 uploads a second of
 * 1,500 points) under 500 trip lists a second, then small uploads until the watch has published
 * about a thousand times. Then the watch's serving pack against the same trips loaded by one
 * nightly `load.js` in a copy of the folder: the trip list's p99 and the server's CPU a request,
 * and the two loads' CPU a trip.
 */
export async function benchWatch(ctx: BenchContext): Promise<void> {
  const plan = PLANS[ctx.options.size];
  const history = await historyDir(ctx, 'watch', plan.historyDays, addDays(ctx.day, -1));
  const dir = history.dir;
  const base = ctx.base as NonNullable<BenchContext['base']>;
  // the nightly side starts from the same history, copied before the watch touches it
  const nightlyDir = join(ctx.options.workDir, 'watch-nightly');
  rmSync(nightlyDir, { recursive: true, force: true });
  cpSync(dir, nightlyDir, { recursive: true });
  const templates = await tripTemplates(ctx);
  const listPaths = (await requestPaths(dir, ctx.day, ctx.options.seed)).get('1 trip list') ?? [];
  const uploadUsers = base.users.slice(0, Math.min(plan.uploadUsers, base.users.length)).map((u) => u.orgUserId);
  const demoUsers = uploadUsers.slice(0, plan.demoUsers);
  // uploads are trips of day D, which the history (ending D - 1) leaves free; from 01:00 in the app's zone
  const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `watch-${Date.now().toString(36)}`);
  const paths = pathsFor(dir);

  const server = await startCluster(ctx, dir, 2, { env: { DRIVING_API_RATE_PER_TOKEN: '100000' } });
  let watcher: ReturnType<typeof startNodeChild> | null = null;
  let sampler: LayerSampler | null = null;
  let serverUp = true;
  try {
    const tokens = await issueTokens(server.url, base.apiKey, uploadUsers);
    const metricsDir = join(ctx.options.workDir, 'watch-metrics');
    mkdirSync(metricsDir, { recursive: true });
    const startWatch = (extra: string[]) =>
      startNodeChild(
        `load --watch ${extra.join(' ')}`.trim(),
        jobScript(ctx, 'load'),
        ['--data-dir', dir, '--watch', '--json', '--metrics-dir', metricsDir, ...extra],
        childOptions(ctx, false),
      );
    watcher = startWatch([]);
    // publishes are the watches' batches that ended well, as the running one's metrics file counts them
    let publishedBefore = 0;
    const published = (): number => publishedBefore + okBatches(metricsDir);
    sampler = new LayerSampler(paths.manifestFile, published);
    await sleep(3_000);
    const firstVersion = readManifest(paths.manifestFile)?.version ?? 0;
    const io = new WatchIo(watcher.child.pid as number);

    // 1. the demo's size: one upload a second, each asked for every 50 ms until served
    ctx.progress(`bench: watch: ${plan.demoUploads} uploads at ${DEMO_RATE}/s from ${demoUsers.length} drivers`);
    const demo = new UploadRun(server.url, base.apiKey, tokens, true);
    await demo.send(() => maker.make(templates.whole, demoUsers), DEMO_RATE, plan.demoUploads);
    const demoLags = await demo.finish();
    recordLags(
      ctx,
      `demo size: ${demoUsers.length} drivers, one-trip uploads at ${DEMO_RATE}/s (${plan.historyDays} days of history)`,
      demoLags,
      demo.firstFailures(),
      [
        { q: 0.5, target: `<= ${DEMO_P50_S} s`, limit: DEMO_P50_S },
        { q: 0.99, target: `<= ${DEMO_P99_S} s`, limit: DEMO_P99_S },
      ],
    );

    // 2. a 100,000-driver day's peak, with the trip list asked at 500/s meanwhile
    ctx.progress(
      `bench: watch: ${PEAK_UPLOADS_PER_S} uploads/s of ${PEAK_POINTS} points for ${plan.peakSeconds} s under ${PEAK_LIST_RATE} trip lists/s`,
    );
    const lists = await peakLists(ctx, server.url, base.apiKey, listPaths);
    const peak = new UploadRun(server.url, base.apiKey, tokens, true);
    await peak.send(
      () => maker.make(templates.peak, uploadUsers),
      PEAK_UPLOADS_PER_S,
      plan.peakSeconds * PEAK_UPLOADS_PER_S,
    );
    const peakLags = await peak.finish();
    lists.child.send({ stop: true });
    const listRun = parseResult(await lists.done);
    recordLags(
      ctx,
      `peak: ${PEAK_UPLOADS_PER_S} uploads/s of ${PEAK_POINTS.toLocaleString('en-US')} points for ${plan.peakSeconds} s under ${PEAK_LIST_RATE} trip lists/s`,
      peakLags,
      peak.firstFailures(),
      [{ q: 0.99, target: `<= ${PEAK_P99_S} s`, limit: PEAK_P99_S }],
    );
    const listFailed = listRun.errors + listRun.timeouts + listRun.non2xx;
    record(ctx, {
      stage: 'watch',
      metric: `peak: trip list @ ${PEAK_LIST_RATE}/s meanwhile: p99 (p50; req/s; failed)`,
      value: listRun.p99Ms,
      unit: `ms (${listRun.p50Ms.toFixed(2)} ms; ${Math.round(listRun.throughput)}/s; ${listFailed} failed)`,
      target: `< ${LIST_P99_MS} ms`,
      met: listRun.p99Ms < LIST_P99_MS && listFailed === 0,
    });

    // 3. small uploads until the watches have published `publishes` times in all. What is
    // measured is what many publishes leave the API to read, not the rest between them: a watch
    // that does not rest (`--max-rest-ms 0`) takes over, so that each upload is a publish of its own
    await waitLandingEmpty(paths.landingDir, 120_000);
    await sleep(1_000);
    const first = await stopWatch(watcher, io);
    ctx.children.push(first.run);
    watcher = null;
    rmSync(watchMetricsFile(metricsDir), { force: true });
    publishedBefore = first.json.batches - first.json.failedBatches;
    record(ctx, {
      stage: 'watch',
      metric:
        "the watch's own lag histogram over the demo and the peak (driving_load_lag_seconds, every file): p50 / p99",
      value: `${fmt(first.json.lagP50Seconds)} / ${fmt(first.json.lagP99Seconds)} s`,
      unit: '',
      doc: true,
    });
    watcher = startWatch(['--max-rest-ms', '0']);
    io.follow(watcher.child.pid as number);
    ctx.progress(
      `bench: watch: small uploads at ${TINY_UPLOADS_PER_S}/s until ${plan.publishes} publishes (${published()} so far)`,
    );
    const tinyStarted = performance.now();
    const tiny = new UploadRun(server.url, base.apiKey, tokens, false);
    let lastReport = 0;
    await tiny.send(
      () => maker.make(templates.tiny, uploadUsers),
      TINY_UPLOADS_PER_S,
      Number.MAX_SAFE_INTEGER,
      () => {
        const n = published();
        if (n >= lastReport + 100) {
          lastReport = n - (n % 100);
          ctx.progress(`bench: watch: ${n} publishes`);
        }
        return n >= plan.publishes || performance.now() - tinyStarted > ctx.options.sizes.watchSeconds * 1000;
      },
    );
    const tinyLags = await tiny.finish();
    await waitLandingEmpty(paths.landingDir, 120_000);
    await sleep(1_000);
    sampler.stop();
    const second = await stopWatch(watcher, io);
    ctx.children.push(second.run);
    watcher = null;
    const watch = {
      batches: first.json.batches + second.json.batches,
      failedBatches: first.json.failedBatches + second.json.failedBatches,
      filesLoaded: first.json.filesLoaded + second.json.filesLoaded,
      tripsLoaded: first.json.tripsLoaded + second.json.tripsLoaded,
    };
    const watchSeconds = io.seconds();
    const publishes = watch.batches - watch.failedBatches;
    const versions = (readManifest(paths.manifestFile)?.version ?? firstVersion) - firstVersion;
    record(ctx, {
      stage: 'watch',
      metric: `publishes by the watches, ${tinyLags.accepted.toLocaleString('en-US')} small uploads at ${TINY_UPLOADS_PER_S}/s last (failed batches; manifest versions; files; trips; mean batch)`,
      value: publishes,
      unit: `(${watch.failedBatches}; ${versions}; ${watch.filesLoaded.toLocaleString('en-US')}; ${watch.tripsLoaded.toLocaleString('en-US')}; ${(watchSeconds / Math.max(1, watch.batches)).toFixed(2)} s)`,
      target: `>= ${plan.publishes.toLocaleString('en-US')}`,
      met: publishes >= plan.publishes && watch.failedBatches === 0,
    });
    const layers = sampler.summary();
    record(ctx, {
      stage: 'watch',
      metric: 'serving pack layers at the end, trips / stats (sampled every 100 publishes: min-max)',
      value: `${layers.end.trips} / ${layers.end.stats}`,
      unit: `(${layers.range})`,
      doc: true,
    });

    // 4: the disk the watches wrote
    const watchIo = io.bytes();
    const tripsPerHour = (watch.tripsLoaded / watchSeconds) * 3600;
    record(ctx, {
      stage: 'watch',
      metric: `watch: disk written per hour (/proc/<pid>/io write_bytes over ${Math.round(watchSeconds)} s; trips per hour at that pace)`,
      value: watchIo === null ? 'not readable' : `${(((watchIo / watchSeconds) * 3600) / 2 ** 30).toFixed(2)} GiB/h`,
      unit: `(${Math.round(tripsPerHour).toLocaleString('en-US')} trips/h)`,
      doc: true,
    });

    // the same trips by one nightly load, in the copy of the history; then both folders served side
    // by side and asked in turn, so that the shared machine's moods fall on both alike (its CPU is
    // not compared here: the watch-rest stage compares it at the peak, upload for upload)
    const nightly = await nightlyLoad(ctx, paths.landingDir, nightlyDir, undefined, 1);
    const nightlyServer = await startCluster(ctx, nightlyDir, 2);
    let compared: { watch: ServeFigures; nightly: ServeFigures };
    try {
      compared = await compareServers(ctx, server, nightlyServer, base.apiKey, listPaths);
    } finally {
      ctx.children.push(await nightlyServer.stop());
    }
    serverUp = false;
    ctx.children.push(await server.stop());
    const nightlyLayers = readManifest(pathsFor(nightlyDir).manifestFile)?.pack?.files;
    const serveLine = (f: ServeFigures): string =>
      `${f.p99Ms.toFixed(2)} ms (${f.p50Ms.toFixed(2)} ms); ${f.cpuMsPerRequest.toFixed(3)} ms`;
    record(ctx, {
      stage: 'watch',
      metric: `after the watch: trip list @ ${COMPARE_RATE}/s, ${COMPARE_ROUNDS} runs of ${COMPARE_SECONDS} s: median p99 (p50); serve.js CPU a request`,
      value: serveLine(compared.watch),
      unit: '',
      doc: true,
    });
    record(ctx, {
      stage: 'watch',
      metric: `nightly load of the same ${nightly.trips.toLocaleString('en-US')} trips, the same runs in turn: median p99 (p50); CPU a request; layers trips / stats`,
      value: `${serveLine(compared.nightly)}; ${nightlyLayers?.trips.length ?? '-'} / ${nightlyLayers?.stats.length ?? '-'}`,
      unit: '',
      doc: true,
    });
    const p99Ratio = compared.watch.p99Ms / compared.nightly.p99Ms;
    const cpuRatio = compared.watch.cpuMsPerRequest / compared.nightly.cpuMsPerRequest;
    record(ctx, {
      stage: 'watch',
      metric: `after ${publishes.toLocaleString('en-US')} publishes vs one nightly load: trip list p99, watch / nightly`,
      value: Math.round(p99Ratio * 100) / 100,
      unit: '×',
      target: `<= ${SERVE_RATIO}`,
      met: p99Ratio <= SERVE_RATIO,
    });
    record(ctx, {
      stage: 'watch',
      metric: `after ${publishes.toLocaleString('en-US')} publishes vs one nightly load: serve.js CPU a request, watch / nightly`,
      value: Math.round(cpuRatio * 100) / 100,
      unit: '×',
      target: `<= ${SERVE_RATIO}`,
      met: cpuRatio <= SERVE_RATIO,
    });
  } finally {
    sampler?.stop();
    if (watcher) {
      watcher.child.kill('SIGTERM');
      ctx.children.push(await watcher.done);
    }
    if (serverUp) ctx.children.push(await server.stop());
    dropDataDir(ctx, dir);
    dropDataDir(ctx, nightlyDir);
  }
}

/** Upload templates from the real generator: as generated, cut to the peak's size, and small. */
export async function tripTemplates(
  ctx: BenchContext,
): Promise<{ whole: TripRecord[]; peak: TripRecord[]; tiny: TripRecord[] }> {
  const base = ctx.base as NonNullable<BenchContext['base']>;
  const scratch = join(ctx.options.workDir, '.watch-templates');
  rmSync(scratch, { recursive: true, force: true });
  const summary = await generateTrips({
    outDir: scratch,
    appId: base.appId,
    timeZone: base.timeZone,
    users: base.users.slice(0, 20),
    days: 1,
    endDate: ctx.day,
    seed: ctx.options.seed,
    format: 'ndjson',
    badRecords: false,
  });
  const whole = readTemplates(summary.files[0] as string);
  rmSync(scratch, { recursive: true, force: true });
  const long = whole.filter((t) => t.points.length >= PEAK_POINTS);
  return {
    whole,
    peak: (long.length > 0 ? long : whole).map((t) => cutTrip(t, PEAK_POINTS)),
    tiny: whole.map((t) => cutTrip(t, TINY_POINTS, false)),
  };
}

function recordLags(
  ctx: BenchContext,
  label: string,
  s: LagSummary,
  failures: string[],
  targets: { q: number; target: string; limit: number }[],
): void {
  const lags = s.lagsMs.map((ms) => ms / 1000);
  for (const { q, target, limit } of targets) {
    const v = quantile(lags, q);
    record(ctx, {
      stage: 'watch',
      metric: `${label}: upload (202) to served (first 200 of GET trip), p${Math.round(q * 100)}`,
      value: v === null ? null : Math.round(v * 100) / 100,
      unit: 's',
      target,
      met: v !== null && v <= limit && s.failed === 0 && s.unserved === 0,
    });
  }
  const max = lags.length > 0 ? Math.max(...lags) : null;
  record(ctx, {
    stage: 'watch',
    metric: `${label}: p50 / max; uploads accepted (failed; never served)`,
    value: `${fmt(quantile(lags, 0.5))} / ${fmt(max)} s; ${s.accepted} of ${s.uploads} (${s.failed}; ${s.unserved})${failures.length > 0 ? `: ${failures[0]}` : ''}`,
    unit: '',
    doc: true,
  });
}

interface ServeFigures {
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
}

/**
 * The trip list at a fixed rate on each server in turn, COMPARE_ROUNDS times, after a warm-up of
 * each: the median p99 and p50 of each, and every server process's CPU over its runs a request
 * (bench/process-cpu.ts).
 */
async function compareServers(
  ctx: BenchContext,
  watched: ApiServer,
  nightly: ApiServer,
  apiKey: string,
  paths: string[],
): Promise<{ watch: ServeFigures; nightly: ServeFigures }> {
  const servers = [watched, nightly];
  for (const server of servers)
    await generate(ctx, {
      url: server.url,
      apiKey,
      paths,
      rate: COMPARE_RATE,
      seconds: warmupSeconds(paths.length, COMPARE_RATE),
      connections: 50,
    }).done;
  const runs = servers.map(() => ({ p50: [] as number[], p99: [] as number[], cpuSeconds: 0, requests: 0 }));
  for (let round = 0; round < COMPARE_ROUNDS; round++) {
    for (const [i, server] of servers.entries()) {
      const before = treeCpu(server.pid);
      const run = await generate(ctx, {
        url: server.url,
        apiKey,
        paths,
        rate: COMPARE_RATE,
        seconds: COMPARE_SECONDS,
        connections: 50,
      }).done;
      const cpu = cpuBetween(before, treeCpu(server.pid));
      const r = parseResult(run);
      const failed = r.errors + r.timeouts + r.non2xx;
      if (failed > 0)
        throw new Error(`trip list @ ${COMPARE_RATE}/s: ${failed} failed requests (${JSON.stringify(r.failureKinds)})`);
      const into = runs[i] as (typeof runs)[number];
      into.p50.push(r.p50Ms);
      into.p99.push(r.p99Ms);
      into.cpuSeconds += cpu.seconds;
      into.requests += r.requests;
    }
  }
  const figures = (r: (typeof runs)[number]): ServeFigures => ({
    p50Ms: quantile(r.p50, 0.5) as number,
    p99Ms: quantile(r.p99, 0.5) as number,
    cpuMsPerRequest: (r.cpuSeconds * 1000) / r.requests,
  });
  return { watch: figures(runs[0] as (typeof runs)[number]), nightly: figures(runs[1] as (typeof runs)[number]) };
}

/**
 * What the watch loaded, as a night would find it, into the copy's landing area, then one plain
 * `load.js`. A partner's file is copied as it is; an SDK file (one upload, or a batch the watch
 * made of several) goes back to one file an upload, as the API landed them (the bench's uploads are
 * one record each): the nightly load batches them as it would after a day of uploads, rather than
 * paying the watch's per-batch files again. The load runs `times` times, each in its own copy of
 * the folder, and its CPU is their median: one run's CPU moved by a fifth between runs.
 * `nightlyDir` holds the first run's result.
 */
export async function nightlyLoad(
  ctx: BenchContext,
  watchedLanding: string,
  nightlyDir: string,
  only?: ReadonlySet<string>,
  times = NIGHTLY_RUNS,
): Promise<{ trips: number; files: number; uploads: number; cpuSeconds: number; wallSeconds: number }> {
  const landing = pathsFor(nightlyDir).landingDir;
  mkdirSync(landing, { recursive: true });
  const archive = join(watchedLanding, 'loaded');
  let files = 0;
  let uploads = 0;
  const firstUpload = Date.parse(`${ctx.day}T00:00:00Z`);
  const archived = (existsSync(archive) ? readdirSync(archive) : [])
    .flatMap((day) => readdirSync(join(archive, day)).map((name) => ({ name, from: join(archive, day, name) })))
    .filter((f) => only === undefined || only.has(f.name));
  // in arrival order: upload names start with their time, a batch's with its last upload's
  archived.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { name, from } of archived) {
    if (!statSync(from).isFile()) continue;
    files++;
    if (!isSdkUploadFile(name)) {
      cpSync(from, join(landing, name));
      continue;
    }
    for (const line of readFileSync(from, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      writeFileSync(join(landing, uploadFileName(new Date(firstUpload + uploads))), `${line}\n`);
      uploads++;
    }
  }
  ctx.progress(
    `bench: watch: ${files} archived files into ${landing} (SDK files as ${uploads} uploads again); one nightly load`,
  );
  const again = Array.from({ length: times - 1 }, (_, i) => `${nightlyDir}-again-${i + 1}`);
  for (const dir of again) {
    rmSync(dir, { recursive: true, force: true });
    cpSync(nightlyDir, dir, { recursive: true });
  }
  const runs: ChildResult[] = [];
  for (const dir of [nightlyDir, ...again]) {
    const run = await runNodeChild(
      'load (nightly, same trips)',
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--json'],
      childOptions(ctx, false),
    );
    ctx.children.push(run);
    if (run.cpuSeconds === null) throw new Error("the nightly load's CPU was not recorded");
    runs.push(run);
  }
  for (const dir of again) rmSync(dir, { recursive: true, force: true });
  const totals = jobJson(runs[0] as ChildResult)['totals'] as { tripsLoaded: number; files: number };
  const middle = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  return {
    trips: totals.tripsLoaded,
    files: totals.files,
    uploads,
    cpuSeconds: middle(runs.map((r) => r.cpuSeconds as number)),
    wallSeconds: middle(runs.map((r) => r.wallSeconds)),
  };
}

/** The load generator asking trip lists at the peak's rate until told to stop, past its warm-up. */
export async function peakLists(
  ctx: BenchContext,
  url: string,
  apiKey: string,
  paths: string[],
): Promise<ReturnType<typeof generate>> {
  const lists = generate(ctx, {
    url,
    apiKey,
    paths,
    rate: PEAK_LIST_RATE,
    seconds: 0,
    connections: 50,
    warmupSeconds: 2,
  });
  await sleep(3_000);
  return lists;
}

/** The names of the files the watch has archived so far (landing/loaded/DAY/NAME). */
export function archivedNames(landingDir: string): Set<string> {
  const archive = join(landingDir, 'loaded');
  return new Set((existsSync(archive) ? readdirSync(archive) : []).flatMap((day) => readdirSync(join(archive, day))));
}

/** Reads the manifest every 200 ms: the serving pack's layers at every 100th publish, and at the end. */
class LayerSampler {
  private readonly samples: { trips: number; stats: number }[] = [];
  private nextAt = 100;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private readonly publishes: () => number,
  ) {
    this.timer = setInterval(() => this.read(), 200);
  }

  private read(): { trips: number; stats: number } | null {
    try {
      const n = this.publishes();
      const m = readManifest(this.file);
      if (!m?.pack) return null;
      const layers = { trips: m.pack.files.trips.length, stats: m.pack.files.stats.length };
      if (n >= this.nextAt) {
        this.samples.push(layers);
        this.nextAt = n - (n % 100) + 100;
      }
      return layers;
    } catch {
      // a file read between a write and its rename: the next tick reads it whole
      return null;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  summary(): { end: { trips: number | string; stats: number | string }; range: string } {
    const end = this.read() ?? { trips: '-', stats: '-' };
    if (this.samples.length === 0) return { end, range: 'no sample' };
    const span = (k: 'trips' | 'stats'): string =>
      `${Math.min(...this.samples.map((s) => s[k]))}-${Math.max(...this.samples.map((s) => s[k]))}`;
    return { end, range: `${this.samples.length} samples: trips ${span('trips')}, stats ${span('stats')}` };
  }
}

/** The watch's batches that ended well so far (`driving_load_batches_total{outcome="ok"}` of its metrics file). */
function okBatches(metricsDir: string): number {
  try {
    const match = /^driving_load_batches_total\{outcome="ok"\} (\d+)$/m.exec(
      readFileSync(watchMetricsFile(metricsDir), 'utf8'),
    );
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

type WatchJson = {
  batches: number;
  failedBatches: number;
  filesLoaded: number;
  tripsLoaded: number;
  lagP50Seconds: number | null;
  lagP99Seconds: number | null;
};

/** Stops a watch (SIGTERM: it finishes the batch in hand), counting what it wrote, and reads its summary. */
async function stopWatch(
  watcher: ReturnType<typeof startNodeChild>,
  io: WatchIo,
): Promise<{ run: ChildResult; json: WatchJson }> {
  io.end();
  watcher.child.kill('SIGTERM');
  const run = await watcher.done;
  return { run, json: jobJson(run) as WatchJson };
}

/** The disk written and the time spent by the watches of the stage, one after the other. */
class WatchIo {
  private written: number | null = 0;
  private ms = 0;
  private from: { pid: number; bytes: number | null; at: number } | null = null;

  constructor(pid: number) {
    this.follow(pid);
  }

  follow(pid: number): void {
    this.from = { pid, bytes: writeBytes(pid), at: performance.now() };
  }

  /** Called while the followed watch still runs. */
  end(): void {
    if (!this.from) return;
    const now = writeBytes(this.from.pid);
    this.written =
      this.written === null || now === null || this.from.bytes === null ? null : this.written + now - this.from.bytes;
    this.ms += performance.now() - this.from.at;
    this.from = null;
  }

  bytes(): number | null {
    return this.written;
  }

  seconds(): number {
    return this.ms / 1000;
  }
}

/** Bytes a process has caused to be written to storage (/proc/<pid>/io), or null where unreadable. */
function writeBytes(pid: number): number | null {
  try {
    const match = /^write_bytes:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

export async function waitLandingEmpty(landingDir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const waiting = (): number =>
    readdirSync(landingDir).filter((n) => !n.startsWith('.') && statSync(join(landingDir, n)).isFile()).length;
  while (waiting() > 0 && Date.now() < deadline) await sleep(250);
}

const fmt = (v: number | null): string => (v === null ? '-' : v.toFixed(2));

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
