// `node jobs/export.js`: writes the warehouse as Hive-partitioned Parquet for analysts.
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { METRICS_DIR_FLAG } from '../flags.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';

/** Parses export.js's flags, exports and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'export',
    "$0 [--out DIR] [--cell NAME]\n\nWrites trips, trip_events, stats_daily, safety_scores and apps as Parquet.\nA cell's export (--cell) puts each table under <table>/cell=NAME/: cells' exports copied into one folder read as one (sql.js --parquet).",
    { stateStore: true },
  )
    .option('out', {
      type: 'string',
      describe:
        'target folder, replaced whole (default <data-dir>/exports, which a purge of a deleted account writes again without it; elsewhere inside the data folder is refused; outside it: your copy, which purges never reach)',
    })
    .options(METRICS_DIR_FLAG)
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ jobMetrics, metricsDirOf, exportRecords }, { runExport }] = await Promise.all([
    import('../metrics.js'),
    import('../export.js'),
  ]);

  await runJob(
    'export',
    argv.json,
    async () => {
      const result = await runExport({
        dataDir: resolveDataDir(argv.dataDir),
        out: argv.out,
        progress: stderrProgress,
      });
      const counts = Object.entries(result.tables)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ');
      const whose = result.cell === null ? '' : `cell ${result.cell}: `;
      return {
        result,
        summary: `wrote ${result.out} (${whose}${counts}) in ${result.seconds.toFixed(1)} s\n  ${result.note}`,
      };
    },
    jobMetrics('export', metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir)), exportRecords),
  );
}
