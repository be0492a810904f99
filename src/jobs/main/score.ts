// `node jobs/score.js`: computes the 30- and 90-day safety scores as of a date (or a range of dates)
// and publishes.
import { EXIT, runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { METRICS_DIR_FLAG } from '../flags.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';

/** Parses score.js's flags, scores and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'score',
    "$0 [--date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD [--yes]]\n\nScores from the trips before each date; default: today in each app's zone.\nA backfill of more than 366 days asks for --yes.",
    { stateStore: true },
  )
    .option('date', { type: 'string', describe: 'evaluation date D: scores use trips from D-interval to D-1' })
    .option('from', { type: 'string', describe: 'first evaluation date of a backfill' })
    .option('to', { type: 'string', describe: 'last evaluation date of a backfill (inclusive)' })
    .option('yes', {
      type: 'boolean',
      default: false,
      describe: 'run a backfill of more than 366 days (each date is a run and a version)',
    })
    .option('fail-if-nothing', {
      type: 'boolean',
      default: false,
      describe: 'exit 5 (not 0) when there is nothing to score: no normal trip in any window, or none at all',
    })
    .options(METRICS_DIR_FLAG)
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ jobMetrics, metricsDirOf, scoreRecords }, { runScore }, { scoreSummary }] = await Promise.all([
    import('../metrics.js'),
    import('../score.js'),
    import('../summaries.js'),
  ]);

  await runJob(
    'score',
    argv.json,
    async () => {
      const result = await runScore({
        dataDir: resolveDataDir(argv.dataDir),
        date: argv.date,
        from: argv.from,
        to: argv.to,
        yes: argv.yes,
        tty: Boolean(process.stderr.isTTY) && !argv.json,
        progress: stderrProgress,
      });
      // nothing to score is said in the summary (and `nothingToScore` in --json) and exits 0, so a cron
      // on a new, empty install does not alert; a script that must tell asks for exit 5
      return {
        result,
        summary: scoreSummary(result),
        exitCode: result.nothingToScore && argv.failIfNothing ? EXIT.nothing : EXIT.ok,
      };
    },
    jobMetrics('score', metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir)), scoreRecords),
  );
}
