// `node jobs/generate.js`: generates realistic, deterministic trip records for an app's users (who
// become real accounts).
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';

/** Parses generate.js's flags, generates and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'generate',
    '$0 --users N --days D [--out DIR] [--seed S] [--format ndjson|parquet] [--bad-records]',
    { stateStore: true },
  )
    .option('out', { type: 'string', describe: 'folder to write (default: the landing area, so load.js picks it up)' })
    .option('users', { type: 'number', default: 50, describe: 'drivers (each made a passport account)' })
    .option('days', {
      type: 'number',
      default: 30,
      describe: 'days of trips, ending yesterday (app zone) unless --end-date',
    })
    .option('end-date', { type: 'string', describe: 'last day YYYY-MM-DD' })
    .option('seed', { type: 'number', default: 42, describe: 'same seed, same bytes' })
    .option('format', {
      choices: ['ndjson', 'parquet'] as const,
      default: 'ndjson' as const,
      describe: 'file format of the trip files',
    })
    .option('bad-records', { type: 'boolean', default: false, describe: 'also write malformed lines of every kind' })
    .option('app-id', { type: 'string', describe: 'which app (default: the only one)' })
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const { runGenerate } = await import('../generate.js');

  await runJob('generate', argv.json, async () => {
    const result = await runGenerate({
      dataDir: resolveDataDir(argv.dataDir),
      out: argv.out,
      users: argv.users,
      days: argv.days,
      endDate: argv.endDate,
      seed: argv.seed,
      format: argv.format,
      badRecords: argv.badRecords,
      appId: argv.appId,
      progress: stderrProgress,
    });
    return {
      result,
      summary: `${result.files.length} file(s) in ${result.out}: ${result.trips} trips, ${result.points} points, ${result.events} events, ${result.abnormalTrips} abnormal, ${result.badLines} bad line(s)`,
    };
  });
}
