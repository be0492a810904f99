#!/usr/bin/env node
// Writes the warehouse as Hive-partitioned Parquet for analysts.
import { runJob } from '../dist/src/jobs/cli.js';
import { jobArgs } from '../dist/src/jobs/args.js';
import { METRICS_DIR_FLAG } from '../dist/src/jobs/flags.js';
import { resolveDataDir } from '../dist/src/config.js';
import { stderrProgress } from '../dist/src/progress.js';

const argv = jobArgs('export', '$0 [--out DIR]\n\nWrites trips, trip_events, stats_daily, safety_scores and apps as Parquet.', { stateStore: true })
  .option('out', { type: 'string', describe: 'target folder, replaced whole (default <data-dir>/exports, which a purge of a deleted account writes again without it; elsewhere inside the data folder is refused; outside it: your copy, which purges never reach)' })
  .options(METRICS_DIR_FLAG)
  .parseSync();

// The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
// refused flag cost a Node start only.
const [{ jobMetrics, metricsDirOf, exportRecords }, { runExport }] = await Promise.all([
  import('../dist/src/jobs/metrics.js'),
  import('../dist/src/jobs/export.js'),
]);

await runJob('export', argv.json, async () => {
  const result = await runExport({ dataDir: resolveDataDir(argv.dataDir), out: argv.out, progress: stderrProgress });
  const counts = Object.entries(result.tables).map(([t, n]) => `${t} ${n}`).join(', ');
  return { result, summary: `wrote ${result.out} (${counts}) in ${result.seconds.toFixed(1)} s\n  ${result.note}` };
}, jobMetrics('export', metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir)), exportRecords));
