// `node jobs/purge.js`: purges the data of deleted accounts (the deletion requests pending in the
// state store), publishes the slots without them and erases them to the bytes: the purge step of
// load.js and score.js, alone. jobs/purge.js says its first line (starting.js) before it imports
// this module.
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';
import { METRICS_DIR_FLAG } from '../flags.js';

/** Parses purge.js's flags, purges and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'purge',
    '$0 [--metrics-dir DIR]\n\nPurges every account whose DELETE is recorded in the state store and not yet purged (any API process,\nany machine), publishes without them and erases them to the bytes. load.js and score.js run the same step.',
    { stateStore: true },
  )
    .options(METRICS_DIR_FLAG)
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ runPurgeJob, purgeSummary }, { jobMetrics, metricsDirOf, purgeRecords }] = await Promise.all([
    import('../purge.js'),
    import('../metrics.js'),
  ]);

  const dataDir = resolveDataDir(argv.dataDir);
  await runJob(
    'purge',
    argv.json,
    async () => {
      const result = await runPurgeJob({ dataDir, progress: stderrProgress });
      return { result, summary: purgeSummary(result) };
    },
    jobMetrics('purge', metricsDirOf(argv.metricsDir, dataDir), purgeRecords),
  );
}
