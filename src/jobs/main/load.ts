// `node jobs/load.js`: loads trip files (NDJSON, gzipped NDJSON, Parquet) into the warehouse and
// publishes; with --watch, keeps doing so as files arrive (src/jobs/watch.ts); with --rederive,
// derives the loaded files still at hand again by the current rules.
// jobs/load.js says its first line (starting.js) before it imports this module: Node reads every
// statically imported module before running any.
import { runJob, wholeNumbers } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';
import { METRICS_DIR_FLAG } from '../flags.js';

/** Parses load.js's flags, loads (or re-derives) and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'load',
    '$0 [--input PATH ...]\n$0 --watch\n$0 --rederive [--since YYYY-MM-DD]\n\nLoads what is new in the landing area, or the given files/folders, then publishes.\nWith --watch, stays up and does so in small batches as files arrive (a trip is served seconds after its upload).\nWith --rederive, validates and derives every loaded file still kept in landing/loaded/ again by the current rules, then publishes.',
    { stateStore: true },
  )
    .option('input', { type: 'string', array: true, describe: 'file or folder to load (default: the landing area)' })
    .option('rederive', {
      type: 'boolean',
      describe: 're-derive the stored trips of every archived loaded file by the current rules',
    })
    .option('since', {
      type: 'string',
      describe: 'with --rederive: only files loaded on or after this UTC day (YYYY-MM-DD)',
    })
    .option('watch', {
      type: 'boolean',
      describe: 'stay up: load and publish files as they arrive, in small batches (SIGTERM finishes the batch in hand)',
    })
    .option('poll-ms', {
      type: 'number',
      default: 1000,
      describe:
        'with --watch: how often the landing area and deletion requests are looked at without a change signalled',
    })
    .option('busy-pace', {
      type: 'number',
      describe:
        'with --watch: files a second (counted over the last 30 s) from which the whole --max-rest-ms applies after each batch (default 5)',
    })
    .option('max-rest-ms', {
      type: 'number',
      describe:
        'with --watch: the rest after a batch while files arrive at --busy-pace or faster, less in proportion at a slower pace: a busy stream loads in few, large batches, a trickle at once; what resting may add to the lag (default 10000; 0: back to back)',
    })
    .option('verbose', {
      type: 'boolean',
      describe: 'with --watch: every line of every batch (default: one line a batch, and what failed)',
    })
    .conflicts('rederive', 'input')
    .conflicts('watch', ['input', 'rederive'])
    .check(wholeNumbers({ 'poll-ms': { min: 10, max: 60_000 }, 'max-rest-ms': { min: 0, max: 600_000 } }))
    .check((a) => {
      const busyPace = a['busy-pace'];
      if (busyPace !== undefined && (!Number.isFinite(busyPace) || busyPace < 0 || busyPace > 10_000))
        throw new Error(`--busy-pace: a number of files a second from 0 to 10000, got ${String(busyPace)}`);
      return true;
    })
    .check((a) => {
      if (a.since !== undefined && !a.rederive) throw new Error('--since: only with --rederive');
      return true;
    })
    .options(METRICS_DIR_FLAG)
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ runLoad }, { runRederive, rederiveSummary }, { loadSummary }, { jobMetrics, metricsDirOf, loadRecords }] =
    await Promise.all([
      import('../load.js'),
      import('../rederive.js'),
      import('../summaries.js'),
      import('../metrics.js'),
    ]);

  const metricsDir = metricsDirOf(argv.metricsDir, resolveDataDir(argv.dataDir));
  if (argv.watch) {
    const { runWatch, watchSummary } = await import('../watch.js');
    const stop = new AbortController();
    // the batch in hand finishes (it is one load: whole files or none), then the watch ends with 0
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        stderrProgress(`load: ${signal}: stopping after the batch in hand`);
        stop.abort();
      });
    }
    await runJob('load', argv.json, async () => {
      const result = await runWatch({
        dataDir: resolveDataDir(argv.dataDir),
        progress: stderrProgress,
        verbose: argv.verbose,
        pollMs: argv.pollMs,
        busyPace: argv.busyPace,
        maxRestMs: argv.maxRestMs,
        metricsDir,
        signal: stop.signal,
      });
      return { result, summary: watchSummary(result) };
    });
  } else if (argv.rederive) {
    await runJob(
      'load',
      argv.json,
      async () => {
        const result = await runRederive({
          dataDir: resolveDataDir(argv.dataDir),
          since: argv.since,
          progress: stderrProgress,
        });
        // a file that could not be derived again keeps what it has; the others are re-derived and published
        return { result, summary: rederiveSummary(result), exitCode: result.totals.failed > 0 ? 2 : 0 };
      },
      jobMetrics('rederive', metricsDir),
    );
  } else {
    await runJob(
      'load',
      argv.json,
      async () => {
        const result = await runLoad({
          dataDir: resolveDataDir(argv.dataDir),
          inputs: argv.input,
          progress: stderrProgress,
        });
        // files that could not be read are set aside with their reason (a file that changed while it was
        // loaded stays for the next run); the rest is loaded and published. A link or other non-file in
        // the landing area is reported and the night goes on (0); one named with --input is bad input (2).
        return {
          result,
          summary: loadSummary(result),
          exitCode: result.totals.filesFailed > 0 || result.refusedNamed ? 2 : 0,
        };
      },
      jobMetrics('load', metricsDir, loadRecords),
    );
  }
}
