import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { identityOf, sameIdentity } from './file-identity.js';
import { scanFile } from './scan-file.js';
import { cutSlices, planDir, readPlan, slicesDir, writePlan, type SlicePlan } from './slice-plan.js';

// The plans of large files loaded in slices (src/load/slices.ts): made by one read of the file, in
// a run or beside the runs, and found again by the next run.

/** The gzip files' texts being written by this process's plans (makePlan). */
const writingText = new Set<string>();

/** A gzip file's text in its plan's folder. */
const TEXT = 'text.ndjson';

export type Made = { plan: SlicePlan; dir: string };

interface Aside {
  promise: Promise<void>;
  settled: boolean;
  made: Made | null;
  /** Identity of the file when its planning began: a file changed since is planned again. */
  identity: string;
}

/** Plans being made beside the runs of this process, by file. */
const planning = new Map<string, Aside>();

/** The plan being made aside for `file`, started if there is none; a settled one is handed over once. */
export function planAside(
  landingDir: string,
  file: string,
  sliceBytes: number,
  now: Date,
): { promise: Promise<void>; settled: boolean; made: Made | null; started: boolean } {
  let identity = '';
  try {
    identity = JSON.stringify(identityOf(file));
  } catch {
    // gone or no longer a file: loaded as it is, which reports it
  }
  const known = planning.get(file);
  if (known && known.identity === identity) {
    if (known.settled) planning.delete(file);
    return { ...known, started: false };
  }
  const aside: Aside = { promise: Promise.resolve(), settled: false, made: null, identity };
  aside.promise = makePlan(landingDir, file, sliceBytes, now).then(
    (made) => {
      aside.made = made;
      aside.settled = true;
    },
    () => {
      aside.settled = true;
    },
  );
  planning.set(file, aside);
  return { ...aside, started: true };
}

export async function makePlan(landingDir: string, file: string, sliceBytes: number, now: Date): Promise<Made | null> {
  const identity = identityOf(file);
  // a gzip file's text is written out as it is read, for the slices to be cut from
  const gzip = /\.gz$/i.test(file);
  const text = join(slicesDir(landingDir), `.text-${randomUUID()}.ndjson`);
  let fd: number | undefined;
  writingText.add(text);
  try {
    if (gzip) {
      mkdirSync(slicesDir(landingDir), { recursive: true, mode: 0o700 });
      fd = openSync(text, 'w', 0o600);
    }
    const scan = await scanFile(file, true, identity, fd);
    const size = fd === undefined ? identity.size : fstatSync(fd).size;
    if (!scan.lines) return null;
    const slices = cutSlices(scan.key, size, scan.lines, sliceBytes);
    if (slices.length <= 1) return null;
    const plan: SlicePlan = { source: file, key: scan.key, identity, plannedAt: now.toISOString(), slices };
    const dir = planDir(landingDir, scan.key, file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (gzip) {
      renameSync(text, join(dir, TEXT));
      plan.text = TEXT;
    }
    writePlan(dir, plan);
    return { plan, dir };
  } finally {
    if (fd !== undefined) closeSync(fd);
    rmSync(text, { force: true });
    writingText.delete(text);
  }
}

/** The plans of the landing area, by their file; a folder without a whole plan is removed. */
export function existingPlans(landingDir: string): Map<string, { plan: SlicePlan; dir: string }> {
  const out = new Map<string, { plan: SlicePlan; dir: string }>();
  const root = slicesDir(landingDir);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return out;
  }
  for (const name of names) {
    const dir = join(root, name);
    // a gzip file's text being written by a plan made aside; one a stopped run left is removed
    if (writingText.has(dir)) continue;
    const plan = readPlan(dir);
    // a gzip file's plan needs its text: without it, the file is planned again
    if (plan && (!plan.text || existsSync(join(dir, plan.text)))) out.set(plan.source, { plan, dir });
    else rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

export function stillPlanned(plan: SlicePlan): boolean {
  try {
    return sameIdentity(plan.identity, identityOf(plan.source));
  } catch {
    return false;
  }
}

/** Forgets a plan being made aside for `file` (its plan was found written). */
export function forgetPlanning(file: string): void {
  planning.delete(file);
}
