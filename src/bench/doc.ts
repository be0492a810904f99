import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { writeFileAtomic } from '../fsutil.js';
import type { BenchContext } from './context.js';
import type { Machine } from './machine.js';
import { resultTable } from './table.js';
import { judgesTargets, sizeLabel } from './options.js';

const MARKER = '<!-- bench runs, newest first: `npm run bench` inserts each run below this line -->';

const HEADER = `# Benchmarks

Measured by \`npm run bench\` (code in \`src/bench/\`, SQL in \`sql/bench/\`). Each run adds
a section below, newest first; nothing is overwritten. The targets apply to the \`full\`
size (100,000 users); a smaller run shows where time goes, not whether the targets are met.

How the numbers are made:
- **load**: one day of the real generator's points for every user, split into files of
  \`usersPerFile\` users (the load holds one file in memory), loaded by \`node jobs/load.js\` into an
  empty data folder, beside DuckDB's bare \`read_ndjson\`/\`read_parquet\` + \`unnest\` of the same files
  in the same run (\`sql/bench/bare_read_*.sql\`).
- **growth**, **score**, **api**: history is synthesized trips-only straight into the warehouse
  (\`sql/bench/\`, published by the real publish with every check), then the real jobs run on it.
- **api**: \`node jobs/serve.js\` on loopback; an open-loop load generator in its own process
  (\`src/bench/load-generator.ts\`): request i is sent when it is due (start + i/rate) whether or not
  earlier ones were answered, its latency counts from that due time (so a stalled server shows up in
  p99 instead of hiding behind requests never sent), throughput is answers over the time from the
  first due request to the last answer, and a request unanswered 10 s after the run counts as failed.
- **abuse**: \`node jobs/serve.js\` on loopback over a small published folder; \`/healthz\` and token
  issuing are timed one request after another from 127.0.0.1 while idle, while 8 clients post
  4.6 MB bodies with made-up tokens and 64 send random tokens (from 127.0.0.2, in their own
  process, \`src/bench/abuse-clients.ts\`), during a flood of concurrent connections and while idle
  connections are held (other addresses); then how each kind of bad request is answered.
  \`--serve-from DIR\` runs another (built) checkout's server the same way, for a before/after.
- **resources**: peak RSS reported by each job process itself on exit (\`process.resourceUsage().maxRSS\`).
- The machine is shared: the load average before and after the run is recorded with it.

${MARKER}
`;

/** Inserts this run's section at the top of docs/benchmarks.md (creating the file the first time). */
export function appendRun(ctx: BenchContext, machine: Machine, seconds: number): void {
  const file = ctx.options.docFile;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  const text = current.includes(MARKER) ? current : `${current.trimEnd()}\n\n${MARKER}\n`;
  const at = text.indexOf(MARKER) + MARKER.length;
  writeFileAtomic(file, `${text.slice(0, at)}\n\n${section(ctx, machine, seconds)}${text.slice(at).replace(/^\n+/, '\n')}`, 0o644);
}

function section(ctx: BenchContext, machine: Machine, seconds: number): string {
  const s = ctx.options.sizes;
  const when = ctx.startedAt.toISOString().replace('T', ' ').slice(0, 16);
  const size = sizeLabel(ctx.options);
  return `## ${when} UTC: ${size}, ${s.users.toLocaleString('en-US')} users

- Command: \`${ctx.options.command}\` (stages: ${ctx.options.stages.join(', ')}; ${Math.round(seconds)} s in all)
- Machine: ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.cpu}; Node ${machine.node}; DuckDB ${machine.duckdb}; commit ${machine.commit}
- Load average (1 min) before / after the run: ${ctx.loadBefore.toFixed(2)} / ${loadavg()[0]?.toFixed(2)} (other work on the machine shares its cores)
- Sizes: ${s.users.toLocaleString('en-US')} users, one day of points (${s.usersPerFile} users per file), ${s.historyDays} days of history, API snapshot >= ${s.apiTrips.toLocaleString('en-US')} trips, load generator ${s.apiSeconds} s per run at ${s.apiRates.join(' and ')} req/s over at most ${s.apiConnections} connections${ctx.options.stages.includes('abuse') ? `; abuse: ${s.abuseSeconds} s per timed phase, a flood of ${s.abuseFlood.toLocaleString('en-US')} connections, ${s.abuseIdle.toLocaleString('en-US')} idle ones${ctx.options.serveFrom ? `, server of ${ctx.options.serveFrom}` : ''}` : ''}
- Day D = ${ctx.day}; scores as of ${ctx.scoreDate}

${resultTable(ctx.measurements, judgesTargets(ctx.options))}

`;
}
