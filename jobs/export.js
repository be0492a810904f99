#!/usr/bin/env node
// Writes the warehouse as Hive-partitioned Parquet for analysts.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { METRICS_DIR_FLAG, jobMetrics, metricsDirOf, exportRecords } from '../dist/metrics/jobs.js';
import { resolveDataDir } from '../dist/config.js';
import { runExport } from '../dist/jobs/export.js';
import { stderrProgress } from '../dist/progress.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('export')
  .usage('$0 [--out DIR]\n\nWrites trips, trip_events, stats_daily, safety_scores and apps as Parquet.')
  .option('out', { type: 'string', describe: 'target folder (default <data-dir>/exports); replaced whole' })
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false })
  .options(METRICS_DIR_FLAG)
  .strict()
  .fail(usageFailure('export'))
  .parseSync();

await runJob('export', argv.json, async () => {
  const result = await runExport({ dataDir: resolveDataDir(argv.dataDir), out: argv.out, progress: stderrProgress });
  const counts = Object.entries(result.tables).map(([t, n]) => `${t} ${n}`).join(', ');
  return { result, summary: `wrote ${result.out} (${counts}) in ${result.seconds.toFixed(1)} s` };
}, jobMetrics('export', metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir)), exportRecords));
