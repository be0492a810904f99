// `node jobs/restore.js`: restores a backup of backup.js into a new data folder, after checking
// every file against its manifest; with --load (the default) rebuilds the warehouse and the snapshot
// from the landing archive. jobs/restore.js says its first line (starting.js) before it imports
// this module.
import { exportSetting } from '../../settings.js';
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';

/** Parses restore.js's flags, restores and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'restore',
    '$0 --from DIR --data-dir NEW [--database-url URL] [--no-load]\n\nChecks the backup in DIR against its manifest (a damaged one is refused, naming the file), then restores it into NEW (absent or empty): the state store (SQLite, or an empty PostgreSQL database for a PostgreSQL backup), the webhook outbox and event files, the deletion requests, the warehouse and the landing area; then loads the archived files the warehouse does not hold (all of them from a backup without it) and publishes.',
    { dataDirHelp: 'the new data folder (absent or empty; env DRIVING_DATA_DIR)' },
  )
    .option('from', { type: 'string', demandOption: true, describe: 'the backup folder (made by backup.js)' })
    .option('database-url', {
      type: 'string',
      describe: 'for a PostgreSQL backup: an empty database to restore into (env DATABASE_URL)',
    })
    .option('pg-bin', {
      type: 'string',
      describe: 'folder of pg_restore (env DRIVING_PG_BIN; default PATH, then /usr/lib/postgresql/15/bin)',
    })
    .option('load', {
      type: 'boolean',
      default: true,
      describe: 'load the landing archive again afterwards (--no-load: lay the files down only)',
    })
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ resolveDatabaseUrl }, { runRestore }, { runLoad }] = await Promise.all([
    import('../../state/open.js'),
    import('../../backup/restore.js'),
    import('../load.js'),
  ]);

  const databaseUrl = resolveDatabaseUrl(argv.databaseUrl);
  // the load that follows opens the state store through the environment, as every job does
  if (databaseUrl) exportSetting('DATABASE_URL', databaseUrl);

  await runJob('restore', argv.json, async () => {
    const result = await runRestore({
      from: argv.from,
      dataDir: resolveDataDir(argv.dataDir),
      databaseUrl,
      pgBin: argv.pgBin,
      load: argv.load
        ? async (dataDir, inputs, progress) => (await runLoad({ dataDir, inputs, progress })).totals
        : null,
      progress: stderrProgress,
    });
    const loaded =
      result.load && result.warehouse
        ? `; warehouse restored, ${result.archived - result.load.filesSkipped} of ${result.archived} archived file(s) loaded again (the others it holds): ${result.load.tripsLoaded} trips, published`
        : result.load
          ? `; loaded ${result.archived} archived file(s) again: ${result.load.tripsLoaded} trips, published (score.js gives the scores)`
          : result.archived > 0
            ? `; the warehouse is empty (--no-load): ${result.archived} archived file(s) not loaded`
            : '';
    return {
      result,
      summary: `${result.dataDir}: ${result.files} file(s) of the backup of ${result.createdAt} restored (state store ${result.state})${loaded} in ${result.seconds.toFixed(1)} s`,
    };
  });
}
