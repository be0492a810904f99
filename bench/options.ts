import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InputError } from '../src/errors.js';

export const STAGES = [
  'load',
  'growth',
  'score',
  'api',
  'route',
  'zigzag',
  'fairshare',
  'abuse',
  'webhooks',
  'resources',
  'metrics',
  'workers',
  'restart',
  'tokens',
  'watch',
  'watch-rest',
  'purge',
  'slices',
  'follow',
  'compact-files',
  'archive-compact',
  'machines',
  'cells',
] as const;
export type Stage = (typeof STAGES)[number];

export type SizeName = 'small' | 'full';

/** How big a run is. `full` is 100,000 users and 90 days; `small` finishes in a few minutes. */
export interface BenchSizes {
  /** Active drivers: one generated day of points for all of them, and their history. */
  users: number;
  /** Days of synthesized history behind the score job (and the last growth step). */
  historyDays: number;
  /** At least this many trips in the snapshot the API serves during the api stage. */
  apiTrips: number;
  /** Generated input files hold this many users' day each (the load wants files of about 100 MB). */
  usersPerFile: number;
  /** Seconds of each load-generator run (one per operation and rate). */
  apiSeconds: number;
  /** Sockets the load generator keeps open to the server (load-generator.ts). */
  apiConnections: number;
  /** Request rates of the api stage, requests per second. */
  apiRates: number[];
  /** Webhook events to the fast receiver (and as many to the dead endpoint in the second run). */
  webhookEvents: number;
  /** Seconds of each timed phase of the abuse stage (idle, then under hostile clients). */
  abuseSeconds: number;
  /** Connections opened at once from one address in the abuse stage's flood. */
  abuseFlood: number;
  /** Idle connections one address opens and holds in the abuse stage. */
  abuseIdle: number;
  /** The watch stage's small uploads go on until 1,000 publishes or this many seconds (a publish takes seconds on a busy machine). */
  watchSeconds: number;
  /** The cells stage's drivers per cell: two cells of this many beside one warehouse of twice as many. */
  cellsDrivers: number;
}

export const SIZES: Readonly<Record<SizeName, BenchSizes>> = {
  small: {
    users: 2_000,
    historyDays: 90,
    apiTrips: 200_000,
    usersPerFile: 400,
    apiSeconds: 5,
    apiConnections: 100,
    apiRates: [200, 1000],
    webhookEvents: 5_000,
    abuseSeconds: 5,
    abuseFlood: 10_000,
    abuseIdle: 16_000,
    watchSeconds: 480,
    cellsDrivers: 1_000,
  },
  full: {
    users: 100_000,
    historyDays: 90,
    apiTrips: 5_000_000,
    usersPerFile: 400,
    apiSeconds: 20,
    apiConnections: 100,
    apiRates: [200, 1000],
    webhookEvents: 10_000,
    abuseSeconds: 20,
    abuseFlood: 10_000,
    abuseIdle: 16_000,
    watchSeconds: 1_800,
    cellsDrivers: 50_000,
  },
};

export interface BenchOptions {
  size: SizeName;
  sizes: BenchSizes;
  stages: Stage[];
  workDir: string;
  /** Keep the work folder afterwards (for profiling the data by hand). */
  keep: boolean;
  /** Growth also times the rare publish that merges every layer into a new base (about 10 min at the full size). */
  mergeCost: boolean;
  /** Write this run's figures into docs/benchmarks.md (bench/doc.ts). */
  doc: boolean;
  docFile: string;
  /** The command line as typed, for the record. */
  command: string;
  seed: number;
  /** The watch-rest stage's `--max-rest-ms` values, in order. */
  watchRests: number[];
  /** The slices stage's DRIVING_LOAD_SLICE_BYTES values, in MiB (0: the file loaded whole). */
  sliceMib: number[];
  /** The abuse stage runs the `jobs/serve.js` of this checkout (default: this one), to measure the code before a change. */
  serveFrom?: string;
}

export interface BenchFlags {
  size?: string;
  only?: string[];
  users?: number;
  historyDays?: number;
  apiTrips?: number;
  usersPerFile?: number;
  apiSeconds?: number;
  apiConnections?: number;
  webhookEvents?: number;
  watchSeconds?: number;
  cellsDrivers?: number;
  watchRests?: string;
  sliceMib?: string;
  workDir?: string;
  keep?: boolean;
  mergeCost?: boolean;
  doc?: boolean;
  docFile?: string;
  command?: string;
  seed?: number;
  serveFrom?: string;
}

/** Flags to options: a size's defaults, then any override (so a mid size is `--users 20000`). */
export function benchOptions(flags: BenchFlags, repoDir: string): BenchOptions {
  const size = (flags.size ?? 'small') as SizeName;
  if (!(size in SIZES)) throw new InputError(`--size must be small or full, got '${flags.size}'`);
  const sizes: BenchSizes = { ...SIZES[size] };
  const override = (key: keyof BenchSizes, value: number | undefined, min: number, max: number, flag: string): void => {
    if (value === undefined) return;
    if (!Number.isInteger(value) || value < min || value > max)
      throw new InputError(`${flag} must be an integer from ${min} to ${max}`);
    (sizes as unknown as Record<string, number>)[key] = value;
  };
  override('users', flags.users, 10, 1_000_000, '--users');
  override('historyDays', flags.historyDays, 2, 400, '--history-days');
  override('apiTrips', flags.apiTrips, 1, 100_000_000, '--api-trips');
  override('usersPerFile', flags.usersPerFile, 1, 100_000, '--users-per-file');
  override('apiSeconds', flags.apiSeconds, 1, 600, '--api-seconds');
  override('apiConnections', flags.apiConnections, 1, 1000, '--api-connections');
  override('webhookEvents', flags.webhookEvents, 1, 10_000_000, '--webhook-events');
  override('watchSeconds', flags.watchSeconds, 10, 86_400, '--watch-seconds');
  override('cellsDrivers', flags.cellsDrivers, 10, 1_000_000, '--cells-drivers');
  const only = (flags.only ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const stage of only) {
    if (!(STAGES as readonly string[]).includes(stage))
      throw new InputError(`--only: unknown stage '${stage}' (stages: ${STAGES.join(', ')})`);
  }
  return {
    size,
    sizes,
    stages: only.length > 0 ? STAGES.filter((s) => only.includes(s)) : [...STAGES],
    workDir: resolve(flags.workDir ?? join(tmpdir(), 'driving-bench')),
    keep: flags.keep ?? false,
    mergeCost: flags.mergeCost ?? true,
    doc: flags.doc ?? true,
    docFile: resolve(flags.docFile ?? join(repoDir, 'docs', 'benchmarks.md')),
    command: flags.command ?? 'npm run bench',
    seed: flags.seed ?? 42,
    watchRests: watchRests(flags.watchRests),
    sliceMib: sliceMib(flags.sliceMib),
    ...(flags.serveFrom ? { serveFrom: resolve(flags.serveFrom) } : {}),
  };
}

/** The rests the watch-rest stage measures: the default rest and the shorter ones it was chosen over. */
export const WATCH_RESTS = [0, 2_500, 5_000, 10_000] as const;

function watchRests(flag: string | undefined): number[] {
  if (flag === undefined) return [...WATCH_RESTS];
  const rests = flag.split(',').map((s) => s.trim());
  if (rests.length === 0 || rests.some((r) => !/^\d+$/.test(r) || Number(r) > 600_000))
    throw new InputError(`--watch-rests must be milliseconds from 0 to 600000, comma-separated; got '${flag}'`);
  return rests.map(Number);
}

/** The slice sizes the slices stage measures by default: the default DRIVING_LOAD_SLICE_BYTES. */
export const SLICE_MIB = [32] as const;

function sliceMib(flag: string | undefined): number[] {
  if (flag === undefined) return [...SLICE_MIB];
  const sizes = flag.split(',').map((s) => s.trim());
  if (sizes.length === 0 || sizes.some((m) => !/^\d+$/.test(m) || Number(m) > 65_536))
    throw new InputError(`--slice-mib must be MiB from 0 to 65536, comma-separated; got '${flag}'`);
  return sizes.map(Number);
}

/**
 * Days of history behind the cells stage's nightly score: the size's, at most the 30 days of
 * derived data a deployment keeps (docs/scaling.md), so the stage's setup stays minutes.
 */
export function cellsHistoryDays(sizes: BenchSizes): number {
  return Math.min(sizes.historyDays, 30);
}

/** The growth steps: day N loaded on N-1 days of history, for N = 1, 30 and the history length. */
export function growthDays(historyDays: number): number[] {
  return [...new Set([1, Math.min(30, historyDays), historyDays])].sort((a, b) => a - b);
}

/** 'small', 'full', or 'full with overrides' when a flag changed a size. */
/** The targets are set for the full size: only a full run, unchanged, gives verdicts. */
export function judgesTargets(options: BenchOptions): boolean {
  return sizeLabel(options) === 'full';
}

export function sizeLabel(options: BenchOptions): string {
  return JSON.stringify(options.sizes) === JSON.stringify(SIZES[options.size])
    ? options.size
    : `${options.size} with overrides`;
}
