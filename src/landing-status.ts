import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sliceProgress } from './slice-progress.js';

/** What waits in the landing area and what the load set aside (docs/operating.md, "Landing"). */
export interface LandingStatus {
  /** Input files waiting for the load (SDK uploads and partner files). */
  waiting: number;
  /** Seconds since the oldest waiting file was last written; null when none waits. */
  oldestWaitingSeconds: number | null;
  /** Files the load set aside under `failed/` (a file that could not be read, or whose change failed a check). */
  failed: number;
}

const INPUT = /\.(ndjson|jsonl|json)(\.gz)?$|\.parquet$/i;
/** Names writers use while a file is not complete yet: they write there, then rename. */
const IN_PROGRESS = /^\.|\.(tmp|part)$/i;

/** A name the load takes from the landing area (src/load/landing.ts): an input file, not one being written. */
export function isInputName(name: string): boolean {
  return INPUT.test(name) && !IN_PROGRESS.test(name);
}

/**
 * Counts the landing area: its input files waiting, and the files under `failed/<day>/` (their
 * `.reason.txt` beside them not counted). Reads only folder listings and the waiting files' times,
 * so a probe can call it; `LandingCounter` keeps the answer a moment for busy probes and scrapes.
 */
export function landingStatus(landingDir: string, now: number = Date.now()): LandingStatus {
  const waiting = waitingFiles(landingDir);
  // a large file loading a slice a batch waits since its last slice, not since it arrived
  const sliced = sliceProgress(landingDir);
  let oldest = Number.POSITIVE_INFINITY;
  for (const [name, mtime] of waiting) oldest = Math.min(oldest, Math.max(mtime, sliced.get(name) ?? 0));
  let failed = 0;
  const failedDir = join(landingDir, 'failed');
  for (const day of listing(failedDir)) {
    for (const name of listing(join(failedDir, day))) if (!name.endsWith('.reason.txt')) failed++;
  }
  return {
    waiting: waiting.size,
    oldestWaitingSeconds: waiting.size > 0 ? Math.max(0, (now - oldest) / 1000) : null,
    failed,
  };
}

/** The input files waiting at the top of the landing area, by name, with when each was last written (ms). */
export function waitingFiles(landingDir: string): Map<string, number> {
  return new WaitingFiles(landingDir).read();
}

/**
 * `waitingFiles`, read again and again (the watch does while it rests): each name is `stat`ed once,
 * when it is first seen, so a look costs a folder listing.
 */
export class WaitingFiles {
  private times = new Map<string, number>();

  constructor(private readonly landingDir: string) {}

  /** When each input file waiting now was last written (ms). */
  read(): Map<string, number> {
    const found = new Map<string, number>();
    for (const name of listing(this.landingDir)) {
      if (!isInputName(name)) continue;
      const known = this.times.get(name);
      if (known !== undefined) {
        found.set(name, known);
        continue;
      }
      try {
        const st = statSync(join(this.landingDir, name));
        if (st.isFile()) found.set(name, st.mtimeMs);
      } catch {
        // taken by the load since the listing
      }
    }
    this.times = found;
    return found;
  }
}

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `landingStatus`, read again at most every `maxAgeMs` (default 1 s). */
export class LandingCounter {
  private last: { at: number; status: LandingStatus } | null = null;

  constructor(
    private readonly landingDir: string,
    private readonly maxAgeMs = 1000,
  ) {}

  read(now: number = Date.now()): LandingStatus {
    if (this.last === null || now - this.last.at >= this.maxAgeMs)
      this.last = { at: now, status: landingStatus(this.landingDir, now) };
    return this.last.status;
  }
}
