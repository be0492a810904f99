#!/usr/bin/env node
// Computes the 30- and 90-day safety scores as of a date (or a range of dates) and publishes.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { METRICS_DIR_FLAG, jobMetrics, metricsDirOf, scoreRecords } from '../dist/metrics/jobs.js';
import { resolveDataDir } from '../dist/config.js';
import { runScore } from '../dist/jobs/score.js';
import { stderrProgress } from '../dist/progress.js';
import { scoreSummary } from '../dist/jobs/summaries.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('score')
  .usage('$0 [--date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD [--yes]]\n\nScores from the trips before each date; default: today in each app\'s zone.\nA backfill of more than 366 days asks for --yes.')
  .option('date', { type: 'string', describe: 'evaluation date D: scores use trips from D-interval to D-1' })
  .option('from', { type: 'string', describe: 'first evaluation date of a backfill' })
  .option('to', { type: 'string', describe: 'last evaluation date of a backfill (inclusive)' })
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('yes', { type: 'boolean', default: false, describe: 'run a backfill of more than 366 days (each date is a run and a version)' })
  .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' })
  .options(METRICS_DIR_FLAG)
  .strict()
  .fail(usageFailure('score'))
  .parseSync();

await runJob('score', argv.json, async () => {
  const result = await runScore({ dataDir: resolveDataDir(argv.dataDir), date: argv.date, from: argv.from, to: argv.to, yes: argv.yes,
    tty: Boolean(process.stderr.isTTY) && !argv.json, progress: stderrProgress });
  return { result, summary: scoreSummary(result) };
}, jobMetrics('score', metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir)), scoreRecords));
