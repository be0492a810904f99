import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { writeFileAtomic } from '../src/fsutil.js';
import type { BenchContext } from './context.js';
import type { Machine } from './machine.js';
import { resultTable } from './table.js';
import { judgesTargets, sizeLabel } from './options.js';

/**
 * docs/benchmarks.md holds current figures, not history (git keeps that): each run replaces, per
 * stage and size, the section of the previous run of that stage and size, between two markers.
 */
const MARKER = '<!-- latest runs: `npm run bench` replaces the section of each stage and size it runs -->';

const HEADER = `# Benchmarks

${MARKER}
`;

const begin = (key: string): string => `<!-- run ${key} -->`;
const end = (key: string): string => `<!-- end ${key} -->`;

/** Writes this run into docs/benchmarks.md, one section per stage, replacing that stage's previous one. */
export function appendRun(ctx: BenchContext, machine: Machine, seconds: number): void {
  const file = ctx.options.docFile;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  if (!text.includes(MARKER)) text = `${text.trimEnd()}\n\n${MARKER}\n`;
  const size = sizeLabel(ctx.options);
  for (const stage of ctx.options.stages) {
    const measurements = ctx.measurements.filter((m) => m.stage === stage || (m.stage === 'setup' && ctx.options.stages.length === 1));
    if (measurements.length === 0) continue;
    const key = `${stage} ${size} ${ctx.options.sizes.users}`;
    const body = `${begin(key)}\n${section(ctx, machine, seconds, stage, resultTable(measurements, judgesTargets(ctx.options)))}${end(key)}\n`;
    const from = text.indexOf(begin(key));
    const to = text.indexOf(end(key));
    if (from >= 0 && to > from) {
      text = `${text.slice(0, from)}${body}${text.slice(to + end(key).length + 1)}`;
    } else {
      const at = text.indexOf(MARKER) + MARKER.length;
      text = `${text.slice(0, at)}\n\n${body}${text.slice(at).replace(/^\n+/, '\n')}`;
    }
  }
  writeFileAtomic(file, text, 0o644);
}

function section(ctx: BenchContext, machine: Machine, seconds: number, stage: string, table: string): string {
  const s = ctx.options.sizes;
  const when = ctx.startedAt.toISOString().replace('T', ' ').slice(0, 16);
  return `### ${stage}: ${sizeLabel(ctx.options)}, ${s.users.toLocaleString('en-US')} users (${when} UTC, ${machine.commit})

- Command: \`${ctx.options.command}\` (stages: ${ctx.options.stages.join(', ')}; ${Math.round(seconds)} s in all)
- Machine: ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.cpu}; Node ${machine.node}; DuckDB ${machine.duckdb}
- Load average (1 min) before / after the run: ${ctx.loadBefore.toFixed(2)} / ${loadavg()[0]?.toFixed(2)} (other work on the machine shares its cores)
- Sizes: ${s.users.toLocaleString('en-US')} users, one day of points (${s.usersPerFile} users per file), ${s.historyDays} days of history, API snapshot >= ${s.apiTrips.toLocaleString('en-US')} trips, load generator ${s.apiSeconds} s per run at ${s.apiRates.join(' and ')} req/s over at most ${s.apiConnections} connections${stage === 'abuse' ? `; abuse: ${s.abuseSeconds} s per timed phase, a flood of ${s.abuseFlood.toLocaleString('en-US')} connections, ${s.abuseIdle.toLocaleString('en-US')} idle ones${ctx.options.serveFrom ? `, server of ${ctx.options.serveFrom}` : ''}` : ''}
- Day D = ${ctx.day}; scores as of ${ctx.scoreDate}

${table}

`;
}
