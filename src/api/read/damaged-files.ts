import { isAbsolute, relative } from 'node:path';
import { reportDamage } from '../../damage/reports.js';

/**
 * The published files this API process found damaged while serving the current snapshot (decisions
 * 10): each is named once in the log, listed on /readyz (`damaged`), and reported for the next
 * publish to rebuild (src/damage/reports.ts). Requests that need one get 503 `data_unavailable`.
 * The list is cleared when a new snapshot is switched to: a file still damaged is found again.
 */
export class DamagedFiles {
  private readonly names = new Set<string>();

  constructor(
    private readonly publishedDir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** `file` is a path inside published/ (absolute, or relative to it). */
  report(file: string, why: string, consequence = 'requests that need it get 503 data_unavailable'): void {
    const name = isAbsolute(file) ? relative(this.publishedDir, file) : file;
    if (this.names.has(name)) return;
    this.names.add(name);
    this.log(`serve: ${name} is damaged (${why}): ${consequence} until the next load rebuilds it`);
    reportDamage(this.publishedDir, name, why);
  }

  /** The damaged files' names, relative to published/, sorted. */
  list(): string[] {
    return [...this.names].sort();
  }

  clear(): void {
    this.names.clear();
  }
}

/** DuckDB's words for a block whose checksum fails or a file that is not a database (a damaged slot). */
export const isCorruptDatabase = (error: unknown): boolean =>
  /does not match stored checksum|Corrupt database file|not a valid DuckDB database file/i.test(
    error instanceof Error ? error.message : String(error),
  );
