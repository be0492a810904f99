import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../src/fsutil.js';
import { formatValue, type BenchContext, type Measurement } from './context.js';
import type { Machine } from './machine.js';
import { resultTable } from './table.js';
import { judgesTargets, sizeLabel } from './options.js';

/**
 * docs/benchmarks.md holds current figures, not history (git keeps that): one table, one row per
 * figure. Each run replaces the rows of the stages and size it ran and leaves every other row (other
 * stages, other sizes, figures written by hand) alone. The run's full table goes to stdout and, with
 * its sizes and load, to data/bench-runs/, never to docs/.
 */
export const MARKER = '<!-- current figures: `npm run bench` replaces the rows of each stage and size it runs -->';

const TABLE_HEADER = ['| Stage and size | Figure | Value | Target | Reproduce | Commit |', '|---|---|---|---|---|---|'];

// Stages measured on synthesized history: their size is the drivers and the days of history.
const HISTORY_STAGES = new Set(['growth', 'score', 'api', 'fairshare', 'workers', 'restart']);

/** The short machine line the doc states once at the top; a row measured elsewhere names its own. */
export function machineLabel(machine: Machine): string {
  return `${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.cpu}, Node ${machine.node}, DuckDB ${machine.duckdb}`;
}

/** The first cell of a stage's rows, which is also how a later run finds them, e.g. `score, 2,000 users × 14 days`. */
export function rowKey(ctx: BenchContext, stage: string): string {
  const s = ctx.options.sizes;
  // the cells stage makes drivers of its own, per cell, whatever --users says
  if (stage === 'cells') return `cells, 2 cells × ${s.cellsDrivers.toLocaleString('en-US')} drivers`;
  const users = `${stage}, ${s.users.toLocaleString('en-US')} users`;
  return HISTORY_STAGES.has(stage) ? `${users} × ${s.historyDays} days` : users;
}

/** Writes this run's figures into the one table of docs/benchmarks.md, replacing its stages' rows for this size. */
export function appendRun(ctx: BenchContext, machine: Machine, seconds: number): void {
  const file = ctx.options.docFile;
  const lines = (
    existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmarks\n\nMachine: ${machineLabel(machine)}.\n`
  ).split('\n');
  let at = lines.indexOf(MARKER);
  if (at < 0) {
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    lines.push('', MARKER, '', ...TABLE_HEADER, '');
    at = lines.length - 5;
  }
  // the table: the first line starting with '|' after the marker, to the first line that does not
  let first = at + 1;
  while (first < lines.length && !(lines[first] as string).startsWith('|')) first += 1;
  if (first >= lines.length) {
    lines.splice(at + 1, 0, '', ...TABLE_HEADER);
    first = at + 2;
  }
  let last = first;
  while (last < lines.length && (lines[last] as string).startsWith('|')) last += 1;
  const head = lines.slice(first, first + 2);
  let rows = lines.slice(first + 2, last);

  const text = lines.join('\n');
  const where = text.includes(machineLabel(machine)) ? '' : `; ${machineLabel(machine)}`;
  const measured = `\`${machine.commit}\`, ${ctx.startedAt.toISOString().slice(0, 10)}${where}`;
  const command = `\`${ctx.options.command}\``;
  for (const stage of ctx.options.stages) {
    const figures = docFigures(ctx.measurements.filter((m) => m.stage === stage));
    if (figures.length === 0) continue;
    const key = rowKey(ctx, stage);
    const cells = (row: string): string[] =>
      row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
    // a stage measured at several settings (watch-rest's `--max-rest-ms R: ...`) replaces the rows
    // of the settings it ran: a run of one setting keeps the others' figures
    const ran = new Set(figures.map((m) => variantOf(m.metric)));
    const replaced = (r: string): boolean => cells(r)[0] === key && ran.has(variantOf(cells(r)[1] ?? ''));
    const keep = rows.filter((r) => !replaced(r));
    // a stage's new rows go where its old ones were, else after its other sizes, else at the end
    const old = rows.findIndex(replaced);
    const sameStage = keep
      .map((r) => cells(r)[0] ?? '')
      .map((c, i) => (c.startsWith(`${stage},`) ? i : -1))
      .filter((i) => i >= 0);
    const place = old >= 0 ? old : sameStage.length > 0 ? (sameStage[sameStage.length - 1] as number) + 1 : keep.length;
    const fresh = figures.map(
      (m) =>
        `| ${[key, m.metric, value(m), target(m, judgesTargets(ctx.options)), command, measured].map(cell).join(' | ')} |`,
    );
    rows = [...keep.slice(0, place), ...fresh, ...keep.slice(place)];
  }
  lines.splice(first, last - first, ...head, ...rows);
  writeFileAtomic(file, lines.join('\n'), 0o644);
  if (ctx.repoDir) writeDetails(ctx, machine, seconds, join(ctx.repoDir, 'data', 'bench-runs'));
}

/**
 * The figures of a stage the doc shows: those with a target (the ones the service is held to) and
 * those marked for it, or, for a stage without either, all of them. Setup steps and the per-rung detail stay in the run's output.
 */
function docFigures(measurements: Measurement[]): Measurement[] {
  const targeted = measurements.filter((m) => (m.target !== undefined && m.target !== '') || m.doc === true);
  return targeted.length > 0 ? targeted : measurements;
}

/** The setting a figure was measured at, when its name starts with one (`--max-rest-ms 5000: ...`); null otherwise. */
const variantOf = (metric: string): string | null => /^(--[a-z-]+ [^:|]+):/.exec(metric)?.[1] ?? null;

const value = (m: Measurement): string => `${formatValue(m.value)}${m.unit ? ` ${m.unit}` : ''}`;

function target(m: Measurement, judged: boolean): string {
  if (!m.target) return '';
  const verdict = m.met === true ? 'met' : m.met === false ? '**not met**' : '';
  return verdict === '' ? m.target : `${m.target}: ${verdict}${judged ? '' : ' at this size'}`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The run in full, as the doc's sections once held it: sizes, load average, every measurement. */
function writeDetails(ctx: BenchContext, machine: Machine, seconds: number, dir: string): void {
  const s = ctx.options.sizes;
  const when = ctx.startedAt.toISOString().replace(/[:]/g, '').slice(0, 15);
  const body = `# ${ctx.options.stages.join(', ')}: ${sizeLabel(ctx.options)}, ${s.users.toLocaleString('en-US')} users (${ctx.startedAt.toISOString()}, ${machine.commit})

- Command: \`${ctx.options.command}\` (${Math.round(seconds)} s in all)
- Machine: ${machineLabel(machine)}
- Load average (1 min) before / after the run: ${ctx.loadBefore.toFixed(2)} / ${loadavg()[0]?.toFixed(2)}
- Sizes: ${s.users.toLocaleString('en-US')} users (${s.usersPerFile} a file), ${s.historyDays} days of history, API snapshot >= ${s.apiTrips.toLocaleString('en-US')} trips, load generator ${s.apiSeconds} s a run at ${s.apiRates.join(' and ')} req/s over at most ${s.apiConnections} connections${ctx.options.stages.includes('abuse') ? `; abuse: ${s.abuseSeconds} s a timed phase, a flood of ${s.abuseFlood.toLocaleString('en-US')} connections, ${s.abuseIdle.toLocaleString('en-US')} idle ones` : ''}${ctx.options.serveFrom ? `; server of ${ctx.options.serveFrom}` : ''}
- Day D = ${ctx.day}; scores as of ${ctx.scoreDate}

${resultTable(ctx.measurements, judgesTargets(ctx.options))}
`;
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, `${when}-${ctx.options.stages.join('-')}.md`), body, 0o644);
}
