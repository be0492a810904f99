// `node jobs/bench.js` (`npm run bench`): makes its own data, runs the real jobs and the API on it,
// prints a table and adds the run to docs/benchmarks.md.
import { fileURLToPath } from 'node:url';
import { hideBin } from 'yargs/helpers';
import { runJob } from '../src/jobs/cli.js';
import { jobArgs } from '../src/jobs/args.js';
import { benchOptions, judgesTargets, sizeLabel, STAGES } from './options.js';
import { stderrProgress } from '../src/progress.js';

/** Parses bench.js's flags, runs the bench and sets the exit code. */
export async function main(npm: { lifecycleEvent?: string } = {}): Promise<void> {
  const args = hideBin(process.argv);
  const argv = jobArgs(
    'bench',
    '$0 [--size small|full] [--only STAGE,...] [--json]\n\nMeasures load, growth, score, API, webhooks and resources on generated data.',
    {
      argv: args,
      dataDirHelp:
        "the bench's own folder, where the run makes its data (default: <tmp>/driving-bench; emptied first, so it must be empty, new, or made by an earlier run; never DRIVING_DATA_DIR)",
    },
  )
    .option('size', {
      choices: ['small', 'full'] as const,
      default: 'small' as const,
      describe: 'small: minutes; full: 100,000 users, 90 days',
    })
    .option('only', { type: 'string', array: true, describe: `stages to run (${STAGES.join(', ')}), comma-separated` })
    .option('users', { type: 'number', describe: 'override: active users' })
    .option('history-days', { type: 'number', describe: 'override: days of history for score and growth' })
    .option('api-trips', { type: 'number', describe: 'override: least trips in the API snapshot' })
    .option('users-per-file', { type: 'number', describe: 'override: users per generated input file' })
    .option('api-seconds', { type: 'number', describe: 'override: seconds per load-generator run' })
    .option('api-connections', { type: 'number', describe: 'override: load-generator connections' })
    .option('webhook-events', { type: 'number', describe: 'override: webhook events per receiver' })
    .option('watch-seconds', {
      type: 'number',
      describe:
        'override: watch: at most this long for the small uploads before the comparison (it stops at 1,000 publishes)',
    })
    .option('cells-drivers', {
      type: 'number',
      describe: 'override: cells: drivers per cell (two cells of N beside one warehouse of 2N)',
    })
    .option('watch-rests', {
      type: 'string',
      describe: 'watch-rest: the --max-rest-ms values measured, comma-separated (default 0,2500,5000,10000)',
    })
    .option('slice-mib', {
      type: 'string',
      describe: 'slices: the DRIVING_LOAD_SLICE_BYTES values measured, in MiB, comma-separated (default 32; 0: whole)',
    })
    .option('seed', { type: 'number', default: 42, describe: 'same seed, same generated data' })
    .option('serve-from', {
      type: 'string',
      describe: 'abuse: run the jobs/serve.js of this checkout (built), e.g. a worktree of the code before a change',
    })
    .option('work-dir', { type: 'string', describe: 'the same as --data-dir (the name the bench had first)' })
    .option('keep', { type: 'boolean', default: false, describe: 'keep the work folder afterwards' })
    .option('merge-cost', {
      type: 'boolean',
      default: true,
      describe: 'growth: also time merging every layer of day N into a new base (--no-merge-cost: do not)',
    })
    .option('doc', { type: 'boolean', default: true, describe: 'add the run to docs/benchmarks.md (--no-doc: do not)' })
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const { runBench } = await import('./run.js');

  // the command as typed, for the record in docs/benchmarks.md
  const command =
    npm.lifecycleEvent === 'bench'
      ? `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`
      : `node jobs/bench.js${args.length > 0 ? ` ${args.join(' ')}` : ''}`;

  await runJob('bench', argv.json, async () => {
    // dist/bench/main.js: the repository is two folders up
    const repoDir = fileURLToPath(new URL('../..', import.meta.url));
    const options = benchOptions({ ...argv, workDir: argv.dataDir ?? argv.workDir, command }, repoDir);
    const result = await runBench(options, repoDir, stderrProgress);
    if (!argv.json) process.stdout.write(`\n${result.table}\n\n`);
    const scope = judgesTargets(options) ? '' : ' at this size (the targets are set for --size full)';
    const missed =
      result.missed.length === 0
        ? `every target met${scope}`
        : `${result.missed.length} target(s) missed${scope}:\n  ${result.missed.join('\n  ')}`;
    const failed = result.failedStages.length > 0 ? `; stage(s) failed: ${result.failedStages.join(', ')}` : '';
    return {
      result,
      summary: `${sizeLabel(options)} run (${options.sizes.users} users) in ${Math.round(result.seconds)} s${failed}; ${missed}${result.docFile ? `\n  written to ${result.docFile}` : ''}`,
      exitCode: result.failedStages.length > 0 ? 1 : 0,
    };
  });
}
