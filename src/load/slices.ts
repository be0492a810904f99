import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isMachineError } from '../machine-error.js';
import { ChangedDuringLoadError } from './file-identity.js';
import { writeSlice, type Slice, type SlicePlan } from './slice-plan.js';
import { existingPlans, forgetPlanning, makePlan, planAside, stillPlanned, type Made } from './slice-planning.js';
import { isSdkUploadFile } from './uploads.js';
import { moveLanded } from './landing.js';
import { emptyFileReport, type FileReport } from './report.js';
import { firstLine } from '../errors.js';
import type { StandsFor } from './load-file.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { queryFile } from '../db/sql.js';

/** What a slice file stands for: the partner's file, its place in it, and the plan's moment. */
export interface SliceUse {
  plan: SlicePlan;
  slice: Slice;
  dir: string;
  /** The file's slices not yet in (shared by its uses): once none is left, the file is archived whole. */
  open: Set<number>;
}

export interface SliceStep {
  /** The input files with each large partner file replaced by the slices this run takes (none: it waits). */
  files: string[];
  /** Slice files (written when their load starts: `prepare`) and what each stands for. */
  slices: Map<string, SliceUse>;
  /** Partner files whose every slice was already in (a run stopped before archiving them): archive them. */
  complete: SliceUse[];
  /** Large files left for a later run: this run's slice budget was spent, or their plan is being made. */
  waiting: number;
  /** Plans being made aside (`planAside`): settles when they are (never rejects). */
  planning: Promise<void> | null;
  notes: string[];
}

/**
 * NDJSON is sliced, gzip or not (a gzip stream cannot be read from the middle: its text is
 * written out once, as the plan is made); a Parquet file's rows are not lines.
 */
const SLICEABLE = /\.(ndjson|jsonl|json)(\.gz)?$/i;

/**
 * Puts a partner file larger than `sliceBytes` into slices of whole lines, each loaded as a file of
 * its own (its own transaction, ledger row and version), so that a continuous load publishes SDK
 * uploads between them: it takes `maxSlices` a run, the plain load all of them. Slices load in
 * file order, judged against the plan's one moment, and keep the partner's file name and line
 * numbers, so the warehouse ends as a load of the whole file leaves it (docs/decisions.md, "Large
 * partner files in slices"). Crash-safe: the plan is written before the first slice loads, a slice
 * is in the warehouse whole or not at all (its key in the ledger), and the file is archived only
 * once every slice is in.
 */
export async function takeSlices(
  landingDir: string,
  files: string[],
  options: {
    sliceBytes: number;
    maxSlices: number;
    now: Date;
    loaded: (keys: string[]) => Promise<Set<string>>;
    /**
     * Make a new plan beside the runs rather than in one (the continuous load): its scan reads the
     * whole file, a minute for a 100,000-driver day, which no upload should wait for.
     */
    planAside?: boolean;
  },
): Promise<SliceStep> {
  const step: SliceStep = { files: [], slices: new Map(), complete: [], waiting: 0, planning: null, notes: [] };
  const plans = existingPlans(landingDir);
  let budget = options.maxSlices;
  for (const file of files) {
    const found = plans.get(file);
    plans.delete(file);
    if (found) forgetPlanning(file);
    const large = SLICEABLE.test(file) && !isSdkUploadFile(basename(file)) && sizeOf(file) > options.sliceBytes;
    if (!found && (!large || options.sliceBytes <= 0)) {
      step.files.push(file);
      continue;
    }
    let plan = found?.plan ?? null;
    let dir = found?.dir ?? '';
    if (plan && !stillPlanned(plan)) {
      step.notes.push(
        `${file}: changed since its slices were planned; planned again, its records are taken again from its first line`,
      );
      rmSync(dir, { recursive: true, force: true });
      plan = null;
    }
    if (!plan) {
      if (!large) {
        step.files.push(file);
        continue;
      }
      if (budget <= 0) {
        step.waiting++;
        continue;
      }
      let made: Made | null;
      if (options.planAside) {
        const aside = planAside(landingDir, file, options.sliceBytes, options.now);
        if (!aside.settled) {
          step.waiting++;
          step.planning = aside.promise;
          if (aside.started) step.notes.push(`${file}: planning its slices (reading it once) beside the batches`);
          continue;
        }
        made = aside.made;
      } else made = await makePlan(landingDir, file, options.sliceBytes, options.now).catch(() => null);
      // unreadable, or one slice only: loaded whole, and set aside with its reason as ever
      if (!made) {
        step.files.push(file);
        continue;
      }
      ({ plan, dir } = made);
      step.notes.push(
        `${file}: ${plan.slices.length} slices of up to ${(options.sliceBytes / 2 ** 20).toFixed(0)} MiB (DRIVING_LOAD_SLICE_BYTES), loaded in turn`,
      );
    }
    const loaded = await options.loaded(plan.slices.map((s) => s.key));
    const setAside = setAsideSlices(dir);
    const todo = plan.slices.filter((s) => !loaded.has(s.key) && !setAside.has(s.index));
    if (todo.length === 0) {
      step.complete.push({ plan, slice: plan.slices[plan.slices.length - 1] as Slice, dir, open: new Set() });
      continue;
    }
    const take = todo.slice(0, Math.max(0, budget));
    budget -= take.length;
    if (take.length === 0) step.waiting++;
    const open = new Set(todo.map((s) => s.index));
    for (const slice of take) {
      const path = join(dir, `part-${String(slice.index + 1).padStart(6, '0')}.ndjson`);
      step.files.push(path);
      step.slices.set(path, { plan, slice, dir, open });
    }
  }
  // a run with nothing else to do waits a moment for the plan, rather than follow at once with another
  if (step.planning && step.files.length === 0)
    await Promise.race([step.planning, new Promise((resolve) => setTimeout(resolve, PLAN_WAIT_MS).unref())]);
  // plans whose file is gone from the landing area (archived by a run stopped before it removed
  // the plan, or removed by an operator) have nothing left to do
  for (const { plan, dir } of plans.values())
    if (!existsSync(plan.source)) rmSync(dir, { recursive: true, force: true });
  return step;
}

/**
 * A load run's slices (src/jobs/load.ts): taken from the landing area's files by `takeSlices`, each
 * slice file written as its load starts, named as the partner's file and its lines, and settled
 * as its load ends.
 */
export class SliceRun {
  /** Slices whose file could not be written as their load started (the partner's file changed, a full disk). */
  private readonly unwritten = new Map<string, unknown>();

  private constructor(
    private readonly landingDir: string,
    private readonly step: SliceStep,
  ) {}

  /** Takes the slices of this run (`takeSlices`), says what it did, and archives the files whose every slice was already in. */
  static async take(
    conn: DuckDBConnection,
    landingDir: string,
    files: string[],
    options: Omit<Parameters<typeof takeSlices>[2], 'loaded'>,
    progress: (message: string) => void,
  ): Promise<SliceRun> {
    const step = await takeSlices(landingDir, files, {
      ...options,
      loaded: async (keys) =>
        new Set(
          (await queryFile(conn, 'ops/load/files_known', { keys: listValue(keys) })).map((r) => String(r['key'])),
        ),
    });
    for (const note of step.notes) progress(note);
    for (const use of step.complete) finishPlan(landingDir, use);
    if (step.waiting > 0) progress(`${step.waiting} large file(s) wait for a later batch's slice`);
    return new SliceRun(landingDir, step);
  }

  /** The run's input files, each large partner file replaced by the slices this run takes. */
  get files(): string[] {
    return this.step.files;
  }

  /** As a file's load starts: a slice's file is written. Returns how the file is named in the load's lines. */
  start(file: string): string {
    const use = this.step.slices.get(file);
    if (!use) return file;
    try {
      prepareSlice(file, use);
    } catch (error) {
      this.unwritten.set(file, error);
    }
    return sliceLabel(use);
  }

  /** What a slice file stands for in its load; undefined for a file that is itself. */
  standsFor(file: string): StandsFor | undefined {
    const use = this.step.slices.get(file);
    return use && standsFor(use);
  }

  /** How the file is named in the load's lines. */
  label(file: string): string {
    const use = this.step.slices.get(file);
    return use ? sliceLabel(use) : file;
  }

  /** A slice's report once its load ended (`settleSlice`); null for a file that is no slice. */
  settle(file: string, outcome: { report?: FileReport; error?: unknown }): FileReport | null {
    const use = this.step.slices.get(file);
    if (!use) return null;
    const unwritten = this.unwritten.get(file);
    return settleSlice(this.landingDir, file, use, unwritten ? { error: unwritten } : outcome);
  }
}

/** Writes the slice file a load is about to read (called as its load starts, so at most a lane's worth are on disk). */
export function prepareSlice(path: string, use: SliceUse): void {
  writeSlice(use.plan, use.dir, use.slice, path);
}

/** What the slice file of `use` stands for in its load (src/load/load-file.ts). */
export function standsFor(use: SliceUse): StandsFor {
  const { plan, slice } = use;
  return {
    source: plan.source,
    key: slice.key,
    now: new Date(plan.plannedAt),
    slice: {
      sourceKey: plan.key,
      start: slice.start,
      end: slice.end,
      firstLine: slice.index === 0 ? 1 : slice.firstLine,
    },
  };
}

/** How the slice `use` names itself in the load's lines: the partner's file and its lines. */
export function sliceLabel(use: SliceUse): string {
  const { plan, slice } = use;
  return `${plan.source} lines ${slice.firstLine}-${slice.lastLine} (slice ${slice.index + 1} of ${plan.slices.length})`;
}

/**
 * After a slice's load: its file goes; once the last slice is in, the partner's file is archived
 * whole (under the day its plan was made) and the plan removed. A slice that cannot be loaded (a
 * check its change fails) is set aside alone, as a file of its own under `failed/` with the
 * partner's name, its lines and the reason, and the file's other slices load as ever; one that
 * meets a changed file or a full disk is tried again by the next run.
 */
export function settleSlice(
  landingDir: string,
  path: string,
  use: SliceUse,
  outcome: { report?: FileReport; error?: unknown },
): FileReport {
  const { plan, slice } = use;
  if (outcome.report) {
    rmSync(path, { force: true });
    done(landingDir, use);
    return outcome.report;
  }
  const reason = firstLine(outcome.error);
  if (outcome.error instanceof ChangedDuringLoadError) {
    rmSync(path, { force: true });
    return { ...emptyFileReport(plan.source, false), failed: reason, failedBy: 'changed_during_load', retry: true };
  }
  // a full disk (or a read-only or failing one) is the machine's, not the slice's: the batch fails
  // and the continuous load tries the same slice again once there is room
  if (isMachineError(outcome.error)) {
    rmSync(path, { force: true });
    throw outcome.error;
  }
  const lines = `lines ${slice.firstLine}-${slice.lastLine}`;
  const failed = `${lines} (slice ${slice.index + 1} of ${plan.slices.length}) of ${plan.source}: ${reason}; the file's other lines load as ever`;
  const setAside = join(use.dir, `${basename(plan.source).replace(SLICEABLE, '')}.${lines.replace(' ', '-')}.ndjson`);
  if (existsSync(path)) {
    renameSync(path, setAside);
    moveLanded(landingDir, setAside, plan.plannedAt.slice(0, 10), 'failed', failed);
  }
  // the slice counts as done: set aside with its reason, never taken again
  writeFileSync(join(use.dir, `${FAILED_MARK}${slice.index}`), `${failed}\n`);
  done(landingDir, use);
  return { ...emptyFileReport(plan.source, false), failed, failedBy: 'unreadable' };
}

function done(landingDir: string, use: SliceUse): void {
  use.open.delete(use.slice.index);
  if (use.open.size === 0) finishPlan(landingDir, use);
}

/** A slice set aside (src/load/slices.ts, settleSlice) leaves this mark, with its index, in its plan's folder. */
const FAILED_MARK = 'failed-';

function setAsideSlices(dir: string): Set<number> {
  try {
    return new Set(
      readdirSync(dir)
        .filter((n) => n.startsWith(FAILED_MARK))
        .map((n) => Number(n.slice(FAILED_MARK.length))),
    );
  } catch {
    return new Set();
  }
}

/** Archives a partner file whose every slice is in, and removes its plan. */
export function finishPlan(landingDir: string, use: SliceUse): void {
  const { plan } = use;
  if (existsSync(plan.source) && stillPlanned(plan))
    moveLanded(landingDir, plan.source, plan.plannedAt.slice(0, 10), 'loaded');
  rmSync(use.dir, { recursive: true, force: true });
}

/** How long a run with nothing but a plan being made waits for it (what an upload arriving meanwhile may wait more). */
const PLAN_WAIT_MS = 2_000;

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
