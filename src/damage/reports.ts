import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Damage reports: a reader (the API) that finds a published file damaged (a route file cut short
 * or with a block whose CRC-32 fails, a serving-pack file whose SHA-256 does not match, a slot
 * block DuckDB refuses) leaves one small file in `published/damaged/` naming it, relative to
 * `published/`. The next publish checks each named file in full and rebuilds it from the
 * warehouse when it is damaged (src/publish/route-upkeep.ts), then removes the report. Reports
 * are what make a flipped byte found at read time reach the job without the job reading every
 * byte of every route file at every publish.
 */
export const damagedDir = (publishedDir: string): string => join(publishedDir, 'damaged');

/** Records that `name` (relative to published/) was found damaged; never throws (a full disk only loses the report). */
export function reportDamage(publishedDir: string, name: string, why: string, now: Date = new Date()): void {
  try {
    const dir = damagedDir(publishedDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // one report per file, whatever the number of readers that found it
    const file = join(dir, `${createHash('sha256').update(name).digest('hex').slice(0, 32)}.json`);
    if (!existsSync(file))
      writeFileSync(file, JSON.stringify({ file: name, why, at: now.toISOString() }), { mode: 0o600 });
  } catch {
    // the log line and /readyz still say it; the report is a hint to the next publish
  }
}

export interface DamageReport {
  /** The report's own file, removed once the named file was checked. */
  report: string;
  /** The damaged file, relative to published/. */
  file: string;
}

/** The reports waiting in `published/damaged/`; an unreadable report is dropped. */
export function readDamageReports(publishedDir: string): DamageReport[] {
  const dir = damagedDir(publishedDir);
  if (!existsSync(dir)) return [];
  const out: DamageReport[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const report = join(dir, name);
    try {
      const parsed = JSON.parse(readFileSync(report, 'utf8')) as { file?: unknown };
      if (typeof parsed.file === 'string' && !parsed.file.split('/').includes('..'))
        out.push({ report, file: parsed.file });
      else rmSync(report, { force: true });
    } catch {
      rmSync(report, { force: true });
    }
  }
  return out;
}

export function removeDamageReport(report: DamageReport): void {
  rmSync(report.report, { force: true });
}
