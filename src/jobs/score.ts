import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { appsOf } from './data-dir.js';
import { openWarehouse, type Warehouse } from '../warehouse/warehouse.js';
import { queryFile } from '../db/sql.js';
import { leaveCloseCheckpoint } from '../warehouse/close-checkpoint.js';
import { scoreDate, type ScoreDateResult } from '../score/score-date.js';
import { rankAcrossCells } from '../cells/rank-step.js';
import type { PublishResult } from '../publish/publish.js';
import type { Erasure } from '../purge/erase.js';
import type { PurgeResult } from '../purge/purge.js';
import type { EmitResult } from '../events/emit.js';
import { InputError } from '../errors.js';
import { silent, steps, type Progress } from '../progress.js';
import { datesBetween, isDate, todayIn } from '../time.js';

export interface ScoreOptions {
  dataDir: string;
  /** One evaluation date for every app; default: today in each app's own zone. */
  date?: string;
  from?: string;
  to?: string;
  now?: Date;
  progress?: Progress;
  /** A backfill of more than MAX_UNASKED_DAYS dates runs only when asked for (`--yes`). */
  yes?: boolean;
  /** Show a backfill's progress as one line updating in place (stderr is a terminal, no --json). */
  tty?: boolean;
}

/**
 * A backfill beyond a year asks first: each date is a run and a warehouse version, so a mistyped
 * year easily starts thousands of them, minutes of work nobody meant.
 */
export const MAX_UNASKED_DAYS = 366;
/** Up to this many runs (a night's apps) each get their own progress line. */
const LINES_UP_TO = 10;

export interface ScoreResult {
  runs: ScoreDateResult[];
  /** Why no run scored anyone (no normal trip in any window), or null when someone was scored. */
  nothingToScore: string | null;
  purged: PurgeResult;
  publish: PublishResult;
  events: EmitResult;
  erasure: Erasure;
  seconds: number;
}

/**
 * The steps after the scoring (purge, publish, events), imported while the warehouse opens and the
 * scoring runs: Node reads and compiles their modules while DuckDB works, instead of before it
 * starts.
 */
function laterSteps() {
  const loading = Promise.all([
    import('../purge/step.js'),
    import('../publish/publish.js'),
    import('../warehouse/route-files.js'),
    import('../events/emit.js'),
  ]);
  // awaited after the scoring; a failure to load is said there, not as an unhandled rejection before
  loading.catch(() => undefined);
  return loading;
}

/** The nightly job: scores as of a date (or a range, to backfill), then publishes once. */
export async function runScore(options: ScoreOptions): Promise<ScoreResult> {
  const started = Date.now();
  const later = laterSteps();
  const now = options.now ?? new Date();
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const apps = await appsOf(options.dataDir);
  // today in an app's zone only when no date is given: the first zone lookup loads ICU's zone data
  const plan = planDates(
    options,
    apps.map((a) => ({ appId: a.appId, today: () => todayIn(a.timeZone, now) })),
  );

  const settings = jobSettings();
  const opening = performance.now();
  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: settings.memoryLimit });
  // opening replays the write-ahead log and closing checkpoints: either can be the slow step
  progress(`score: warehouse opened in ${seconds(opening)} s`);
  try {
    const runs: ScoreDateResult[] = [];
    const counter =
      plan.length > LINES_UP_TO ? steps(plan.length, 'score:', progress, { tty: options.tty ?? false }) : null;
    try {
      for (const [index, item] of plan.entries()) {
        const result = await scoreDate(wh, item.appId, item.date, now);
        runs.push(result);
        if (counter) counter.step(`${item.appId} as of ${item.date}: ${result.users} user(s)`);
        else
          progress(
            `score: [${index + 1}/${plan.length}] ${item.appId} as of ${item.date}: ${result.users} user(s) scored`,
          );
      }
    } finally {
      counter?.done();
    }
    const nothingToScore = runs.every((r) => r.users === 0)
      ? await whyNothing(
          wh.conn,
          plan.map((p) => p.date),
        )
      : null;
    if (nothingToScore) progress(`score: nothing to score: ${nothingToScore}`);
    // with cells: this cell's counts posted, its percentiles ranked among every cell's drivers
    await rankAcrossCells(wh, options.dataDir, plan, progress, 'score');
    const [{ finishErasure, runPurge }, { publish }, { routeOptions }, { emitEvents }] = await later;
    // the purge step (src/purge/step.ts; node jobs/purge.js runs it alone): deletion requests from the state store
    const purged = await runPurge(wh, paths, now, progress, 'score');
    progress('score: publishing');
    const published = await publish(wh, {
      publishedDir: paths.publishedDir,
      manifestFile: paths.manifestFile,
      lockWaitMs: settings.publishLockWaitMs,
      now,
      progress: (m) => progress(`score: ${m}`),
      routes: routeOptions(paths, settings.pointsRetentionDays, now),
    });
    progress(`score: publish ${published.detail}`);
    const events = await emitEvents(wh, paths.eventsDir, published.version, now);
    if (events.file)
      progress(
        `score: ${events.tripCreated} trip.created, ${events.tripUpdated} trip.updated, ${events.safetyScoreUpdated} safety_score.updated and ${events.userDeleted} user.deleted event(s) in ${events.file}`,
      );
    // last: the warehouse file is rewritten, so nothing may write to it after this
    const erasure = await finishErasure(wh, paths, purged, progress, 'score');
    // The run's writes (a date's changed scores, their announcements) stay in the write-ahead log,
    // which the next open replays (DuckDB checkpoints by itself once the log passes 16 MB): a
    // checkpoint here would write them into the file at once, and cost more than that replay
    // (docs/benchmarks.md). After an erasure the file was just written anew.
    if (!erasure.warehouse) await leaveCloseCheckpoint(wh.conn);
    return {
      runs,
      nothingToScore,
      purged,
      publish: published,
      events,
      erasure,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    const closing = performance.now();
    wh.close();
    progress(`score: warehouse closed in ${seconds(closing)} s`);
  }
}

/** Says why no user has a normal trip in a window: an empty (new) warehouse, or trips on other days. */
async function whyNothing(conn: Warehouse['conn'], dates: string[]): Promise<string> {
  const [held] = await queryFile(conn, 'ops/score/trips_held');
  const trips = Number(held?.['normal_trips'] ?? 0);
  if (trips === 0) return 'the warehouse holds no normal trips yet (load some with node jobs/load.js)';
  const sorted = [...dates].sort();
  const asOf = sorted.length === 1 ? `as of ${sorted[0]}` : `as of ${sorted[0]}..${sorted[sorted.length - 1]}`;
  // the longest window of sql/models/marts/safety_scores.sql
  return `no normal trip in the 90 days before each date ${asOf} (the warehouse's ${trips} normal trip(s) start on ${String(held?.['first_day'])}..${String(held?.['last_day'])})`;
}

const seconds = (since: number): string => ((performance.now() - since) / 1000).toFixed(2);

function planDates(
  options: ScoreOptions,
  apps: { appId: string; today: () => string }[],
): { appId: string; date: string }[] {
  for (const [flag, value] of [
    ['--date', options.date],
    ['--from', options.from],
    ['--to', options.to],
  ] as const) {
    if (value !== undefined && !isDate(value))
      throw new InputError(`${flag} must be a date YYYY-MM-DD, got '${value}'`);
  }
  if ((options.from === undefined) !== (options.to === undefined)) throw new InputError('--from and --to go together');
  if (options.date !== undefined && options.from !== undefined)
    throw new InputError('give --date or --from/--to, not both');
  if (options.from !== undefined && options.to !== undefined) {
    if (options.to < options.from) throw new InputError('--to must not be before --from');
    const dates = datesBetween(options.from, options.to);
    if (dates.length > 3660) throw new InputError('--from/--to covers more than 3660 days');
    if (dates.length > MAX_UNASKED_DAYS && !options.yes) {
      throw new InputError(
        `--from ${options.from} --to ${options.to} covers ${dates.length} days (${dates.length * apps.length} runs, each a warehouse version): a backfill of more than ${MAX_UNASKED_DAYS} days runs only with --yes`,
      );
    }
    return dates.flatMap((date) => apps.map((a) => ({ appId: a.appId, date })));
  }
  return apps.map((a) => ({ appId: a.appId, date: options.date ?? a.today() }));
}
