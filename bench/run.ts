import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { InputError } from '../src/errors.js';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { silent, type Progress } from '../src/progress.js';
import { setting } from '../src/settings.js';
import { addDays, todayIn } from '../src/time.js';
import { record, type BenchContext, type Measurement } from './context.js';
import { checkDisk } from './disk.js';
import { appendRun } from './doc.js';
import { describeMachine, type Machine } from './machine.js';
import { judgesTargets, type BenchOptions, type Stage } from './options.js';
import { missedTargets, resultTable } from './table.js';
import { benchLoad } from './load-stage.js';
import { benchGrowth } from './growth-stage.js';
import { benchScore } from './score-stage.js';
import { benchApi } from './api-stage.js';
import { benchRoute } from './route-stage.js';
import { benchZigzag } from './zigzag-stage.js';
import { benchFairshare } from './fairshare-stage.js';
import { benchAbuse } from './abuse-stage.js';
import { benchWebhooks } from './webhooks-stage.js';
import { benchResources } from './resources-stage.js';
import { benchMetrics } from './metrics-stage.js';
import { benchWorkers } from './workers-stage.js';
import { benchRestart } from './restart-stage.js';
import { benchTokens } from './tokens-stage.js';
import { benchWatch } from './watch-stage.js';
import { benchWatchRest } from './watch-rest-stage.js';
import { benchPurge } from './purge-stage.js';
import { benchSlices } from './slices-stage.js';
import { benchFollow } from './follow-stage.js';
import { benchCompact } from './compact-stage.js';
import { benchArchiveCompact } from './archive-compact-stage.js';
import { benchMachines } from './machines-stage.js';
import { benchCells } from './cells-stage.js';

export interface BenchResult {
  measurements: Measurement[];
  table: string;
  missed: string[];
  /** Stages that could not finish (their error is in the table). */
  failedStages: Stage[];
  machine: Machine;
  seconds: number;
  docFile: string | null;
  workDir: string;
}

const RUNNERS: Readonly<Record<Stage, (ctx: BenchContext) => Promise<unknown>>> = {
  load: benchLoad,
  growth: benchGrowth,
  score: benchScore,
  api: benchApi,
  route: benchRoute,
  zigzag: benchZigzag,
  fairshare: benchFairshare,
  abuse: benchAbuse,
  webhooks: benchWebhooks,
  resources: benchResources,
  metrics: benchMetrics,
  workers: benchWorkers,
  restart: benchRestart,
  tokens: benchTokens,
  watch: benchWatch,
  'watch-rest': benchWatchRest,
  purge: benchPurge,
  slices: benchSlices,
  follow: benchFollow,
  'compact-files': benchCompact,
  'archive-compact': benchArchiveCompact,
  machines: benchMachines,
  cells: benchCells,
};

/**
 * Runs the chosen stages in order on data the run makes itself, in a fresh work folder, then
 * prints nothing (the job does) and writes its figures into docs/benchmarks.md. A stage that fails is
 * recorded as failed and the next one still runs.
 */
export async function runBench(
  options: BenchOptions,
  repoDir: string,
  progress: Progress = silent,
): Promise<BenchResult> {
  const started = performance.now();
  claimWorkDir(options.workDir);
  const disk = checkDisk(options.workDir, options.sizes, options.stages, options.keep);
  progress(
    `bench: ${options.size}: ${options.sizes.users} users; stages ${options.stages.join(', ')}; work folder ${options.workDir} (needs about ${(disk.neededBytes / 2 ** 30).toFixed(1)} GiB, ${(disk.freeBytes / 2 ** 30).toFixed(1)} free)`,
  );
  const now = new Date();
  const zone = 'Europe/Berlin';
  const ctx: BenchContext = {
    options,
    repoDir,
    progress,
    day: addDays(todayIn(zone, now), -1),
    scoreDate: todayIn(zone, now),
    measurements: [],
    children: [],
    disk: [],
    dayFiles: {},
    startedAt: now,
    loadBefore: loadavg()[0] ?? 0,
  };
  const failedStages: Stage[] = [];
  try {
    for (const stage of options.stages) {
      progress(`bench: stage ${stage}`);
      try {
        await RUNNERS[stage](ctx);
      } catch (error) {
        failedStages.push(stage);
        const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
        record(ctx, {
          stage,
          metric: 'stage failed',
          value: message.slice(0, 300),
          unit: '',
          target: 'runs',
          met: false,
        });
        if (setting('DRIVING_DEBUG') && error instanceof Error) progress(String(error.stack));
      }
    }
  } finally {
    if (!options.keep) rmSync(options.workDir, { recursive: true, force: true });
  }
  const machine = await describeMachine(repoDir);
  const seconds = (performance.now() - started) / 1000;
  if (options.doc) appendRun(ctx, machine, seconds);
  return {
    measurements: ctx.measurements,
    table: resultTable(ctx.measurements, judgesTargets(options)),
    missed: missedTargets(ctx.measurements),
    failedStages,
    machine,
    seconds,
    docFile: options.doc ? options.docFile : null,
    workDir: options.keep ? options.workDir : join(options.workDir, '(removed)'),
  };
}

const MARKER = '.driving-bench';

/**
 * Empties the work folder for a fresh run, but only one the bench made (it holds a marker file):
 * `--data-dir` pointing at a real data folder by mistake must not be wiped.
 */
function claimWorkDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new InputError(`--data-dir ${dir} is a file, not a folder`);
  if (existsSync(dir) && readdirSync(dir).length > 0 && !existsSync(join(dir, MARKER))) {
    throw new InputError(
      `--data-dir ${dir} is not empty and was not made by the bench (a service data folder is never wiped): choose an empty or new folder`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, MARKER), 'made by npm run bench; emptied by the next run\n');
}
