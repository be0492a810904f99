import { isUtf8 } from 'node:buffer';
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { sliceProgress } from './slice-progress.js';

/** What waits in the landing area and what the load set aside (docs/operating.md, "Landing"). */
export interface LandingStatus {
  /** Input files waiting for the load (SDK uploads and partner files). */
  waiting: number;
  /** Seconds since the oldest waiting file arrived in the landing area (`arrivalOf`); null when none waits. */
  oldestWaitingSeconds: number | null;
  /** Files the load set aside under `failed/` (a file that could not be read, or whose change failed a check). */
  failed: number;
  /** Entries named like input files that the load never takes (links, FIFOs, folders): left alone, not waiting. */
  refused: number;
}

const INPUT = /\.(ndjson|jsonl|json)(\.gz)?$|\.parquet$/i;
/** Names writers use while a file is not complete yet: they write there, then rename. */
const IN_PROGRESS = /^\.|\.(tmp|part)$/i;

/** A name the load takes from the landing area (src/load/landing.ts): an input file, not one being written. */
export function isInputName(name: string): boolean {
  return INPUT.test(name) && !IN_PROGRESS.test(name);
}

/**
 * Counts the landing area: its input files waiting, the entries it refuses, and the files under
 * `failed/<day>/` (their `.reason.txt` beside them not counted). Reads only folder listings and
 * the waiting files' `lstat`, so a probe can call it; `LandingCounter` keeps the answer a moment
 * for busy probes and scrapes.
 */
export function landingStatus(landingDir: string, now: number = Date.now()): LandingStatus {
  let waiting = 0;
  let refused = 0;
  // a large file loading a slice a batch waits since its last slice, not since it arrived
  const sliced = sliceProgress(landingDir);
  let oldest = Number.POSITIVE_INFINITY;
  for (const entry of inputEntries(landingDir)) {
    if (entry.stats === null) continue;
    if (!isTakenKind(entry.stats)) {
      refused++;
      continue;
    }
    waiting++;
    oldest = Math.min(oldest, Math.max(arrivalOf(entry.stats), sliced.get(entry.name) ?? 0));
  }
  let failed = 0;
  const failedDir = join(landingDir, 'failed');
  for (const day of listing(failedDir)) {
    for (const name of listing(join(failedDir, day))) if (!name.endsWith('.reason.txt')) failed++;
  }
  return {
    waiting,
    oldestWaitingSeconds: waiting > 0 ? Math.max(0, (now - oldest) / 1000) : null,
    failed,
    refused,
  };
}

/**
 * When a file arrived in the landing area (ms): its inode's change time, which a rename into the
 * folder sets (and every write), and which no writer can set back, unlike the modification time a
 * generator or `cp -p` may give (docs/decisions.md, "Landing: a file's arrival").
 */
export function arrivalOf(stats: Stats): number {
  return stats.ctimeMs;
}

/** A regular file of one name: what the load takes (src/load/landing.ts refuses the rest). */
export function isTakenKind(stats: Stats): boolean {
  return stats.isFile() && stats.nlink === 1;
}

/** An input name at the top of the landing area, with what is there (lstat: never through a link). */
export interface InputEntry {
  /** The name as text; a name that is not UTF-8 shows its bad bytes as U+FFFD here. */
  name: string;
  /** The path to open it by: bytes for a name that is not UTF-8. */
  path: string | Buffer;
  /** Whether the name is not valid UTF-8 (the load renames such a file before it takes it). */
  badName: boolean;
  /** null when it was gone by the time it was looked at. */
  stats: Stats | null;
}

/** The input names at the top of the landing area, read as bytes so that no name is lost. */
export function inputEntries(landingDir: string): InputEntry[] {
  let names: Buffer[];
  try {
    names = readdirSync(landingDir, { encoding: 'buffer' });
  } catch {
    return [];
  }
  const out: InputEntry[] = [];
  for (const raw of names) {
    const badName = !isUtf8(raw);
    // the extension is ASCII, so a name's bytes read one a character tell an input name
    const name = badName ? raw.toString('latin1') : raw.toString('utf8');
    if (!isInputName(name)) continue;
    const path = badName ? Buffer.concat([Buffer.from(`${landingDir}/`), raw]) : join(landingDir, name);
    let stats: Stats | null;
    try {
      stats = lstatSync(path);
    } catch {
      // taken by the load since the listing
      stats = null;
    }
    out.push({ name: badName ? raw.toString('utf8') : name, path, badName, stats });
  }
  return out;
}

/** The input files waiting at the top of the landing area, by name, with when each arrived (ms). */
export function waitingFiles(landingDir: string): Map<string, number> {
  return new WaitingFiles(landingDir).read();
}

/**
 * `waitingFiles`, read again and again (the watch does while it rests): each name is `lstat`ed
 * once, when it is first seen, so a look costs a folder listing. Links and other entries the load
 * refuses are not waiting.
 */
export class WaitingFiles {
  private times = new Map<string, number>();

  constructor(private readonly landingDir: string) {}

  /** When each input file waiting now arrived (ms). */
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
        const st = lstatSync(join(this.landingDir, name));
        if (isTakenKind(st)) found.set(name, arrivalOf(st));
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
