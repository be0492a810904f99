import { join } from 'node:path';
import type { Progress } from '../src/progress.js';
import type { BenchOptions, Stage } from './options.js';
import type { ChildResult } from './child.js';
import type { SynthUser } from './synthesize.js';

/** One line of the result table. `met` is null where no target is set. */
export interface Measurement {
  stage: Stage | 'setup';
  metric: string;
  value: number | string | null;
  unit: string;
  target?: string;
  met?: boolean | null;
  /** Shown in docs/benchmarks.md although it has no target (a figure the stage exists to give). */
  doc?: boolean;
}

/** The app and accounts every data folder of a run shares (copied into each). */
export interface BaseFixture {
  dir: string;
  appId: string;
  apiKey: string;
  timeZone: string;
  users: SynthUser[];
}

/** One generated day of points for every user in one format, split into files. */
export interface DayFiles {
  format: 'ndjson' | 'parquet';
  dir: string;
  files: number;
  trips: number;
  points: number;
  bytes: number;
}

/** A data folder with a published snapshot and what it holds. */
export interface Snapshot {
  dir: string;
  trips: number;
  scored: boolean;
}

/** Bytes a data folder uses, by part, and how many days of trips it holds. */
export interface DiskUse {
  label: string;
  days: number;
  pointsBytes: number;
  /** The route files the API serves the same points from (published/routes). */
  routesBytes: number;
  warehouseBytes: number;
  slotsBytes: number;
  /** The serving pack files the manifest names. */
  packBytes: number;
}

/** State shared by the stages of one run: fixtures built on first use, and what was measured. */
export interface BenchContext {
  options: BenchOptions;
  repoDir: string;
  progress: Progress;
  /** The generated day D (yesterday in the app's zone); history ends before or on it. */
  day: string;
  /** The score job's evaluation date, D + 1 (today): its windows end with day D. */
  scoreDate: string;
  measurements: Measurement[];
  children: ChildResult[];
  disk: DiskUse[];
  base?: BaseFixture;
  /** Generated on first use, per format (the growth stage needs only Parquet). */
  dayFiles: Partial<Record<'ndjson' | 'parquet', DayFiles>>;
  /** H days of trips ending with day D: the growth stage's last folder, then the score stage's. */
  historySnapshot?: Snapshot;
  startedAt: Date;
  /** The machine's 1-minute load average when the run started (it is shared). */
  loadBefore: number;
}

export function record(ctx: BenchContext, m: Measurement): void {
  ctx.measurements.push(m);
  const target = m.target ? `  (target ${m.target}: ${m.met === true ? 'met' : m.met === false ? 'MISSED' : '-'})` : '';
  ctx.progress(`bench: ${m.stage} ${m.metric} = ${formatValue(m.value)} ${m.unit}${target}`);
}

export function formatValue(value: number | string | null): string {
  if (value === null) return '-';
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function childOptions(
  ctx: BenchContext,
  echo = true,
): { cwd: string; probeDir: string; progress: Progress; echo: boolean } {
  return { cwd: ctx.repoDir, probeDir: join(ctx.options.workDir, 'probes'), progress: ctx.progress, echo };
}

export function jobScript(ctx: BenchContext, name: string): string {
  return join(ctx.repoDir, 'jobs', `${name}.js`);
}
