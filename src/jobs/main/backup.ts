// `node jobs/backup.js`: copies what cannot be recomputed (state store, webhook outbox and event
// files, deletion requests, warehouse, landing archive) into a new folder, with a manifest, while
// every process keeps running. jobs/backup.js says its first line (starting.js) before it imports
// this module.
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';

/** Parses backup.js's flags, backs up and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'backup',
    "$0 --to DIR [--database-url URL] [--pg-bin DIR]\n\nCopies the state store, the webhook outbox and event files, the deletion requests, the warehouse (waiting for a job that writes it, up to DRIVING_WAREHOUSE_LOCK_WAIT_MS) and the landing area into DIR (which must not exist), with a manifest of every file's size and SHA-256. Runs beside the API, the deliverer and a load; DIR appears only once the copy is whole.",
    { stateStore: true },
  )
    .option('to', { type: 'string', demandOption: true, describe: 'the backup folder to create' })
    .option('pg-bin', {
      type: 'string',
      describe: 'folder of pg_dump (env DRIVING_PG_BIN; default PATH, then /usr/lib/postgresql/15/bin)',
    })
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ resolveDatabaseUrl }, { runBackup }] = await Promise.all([
    import('../../state/open.js'),
    import('../../backup/backup.js'),
  ]);

  await runJob('backup', argv.json, async () => {
    const result = await runBackup({
      dataDir: resolveDataDir(argv.dataDir),
      to: argv.to,
      databaseUrl: resolveDatabaseUrl(argv.databaseUrl as string | undefined),
      pgBin: argv.pgBin,
      progress: stderrProgress,
    });
    const c = result.counts;
    return {
      result,
      summary: `${result.to}: ${result.files} file(s), ${(result.bytes / 2 ** 20).toFixed(1)} MiB (${result.state.dialect} state store, outbox ${result.outbox}, ${c.warehouse} warehouse, ${c.landing} landing, ${c.events} event, ${c.deletions} deletion request file(s)) in ${result.seconds.toFixed(1)} s`,
    };
  });
}
