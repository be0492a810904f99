// `node jobs/bench-export.js`: export throughput: GET /v1/exports/trips read to the end, Arrow and
// NDJSON, against a data folder's published snapshot (e.g. the demo's: node jobs/demo.js --no-serve
// --data-dir DIR).
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../src/jobs/cli.js';
import { resolveDataDir } from '../src/data-folder.js';

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** Parses bench-export.js's flags, times the exports and exits. */
export async function main(): Promise<void> {
  const argv = yargs(hideBin(process.argv))
    .scriptName('bench-export')
    .usage(
      "$0 --data-dir DIR [--batch-trips N] [--start-time T] [--end-time T] [--format arrow|ndjson] [--repeat N] [--server-log FILE] [--json]\n\nTimes the bulk export of every trip of the folder's (first) app, in both formats, each against a fresh serve.js (one worker, its memory log on): trips/s, bytes, time to first byte, the API process's peak RSS, and its memory after batches 1, 100, 300, 600, 900 and the last.",
    )
    .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
    .option('batch-trips', {
      type: 'number',
      describe: 'DRIVING_API_EXPORT_BATCH_TRIPS for the server (default: its own, 1,000)',
    })
    .option('start-time', {
      type: 'string',
      describe: "export from this start (the route's startTime; default: the first trip)",
    })
    .option('end-time', {
      type: 'string',
      describe: "export up to this start (the route's endTime; default: the last trip)",
    })
    .option('format', {
      type: 'array',
      choices: ['arrow', 'ndjson'] as const,
      describe: 'which formats (default: both)',
    })
    .option('repeat', {
      type: 'number',
      default: 1,
      describe:
        'exports of each format one after another from the same server, each with its own peak RSS: whether memory still grows with the trips exported',
    })
    .check((a) =>
      Number.isInteger(a.repeat) && a.repeat >= 1
        ? true
        : `--repeat must be a whole number of 1 or more, got '${a.repeat}'`,
    )
    .option('server-log', {
      type: 'string',
      describe: "append the server's stderr to this file (with its memory log: a line of memory figures a batch)",
    })
    .option('json', { type: 'boolean', default: false })
    .strict()
    .fail(usageFailure('bench-export'))
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const { benchExport } = await import('./export-throughput.js');

  const formats = argv.format as ('arrow' | 'ndjson')[] | undefined;
  await runJob('bench-export', argv.json, async () => {
    const figures = await benchExport(resolveDataDir(argv.dataDir), {
      batchTrips: argv.batchTrips,
      formats,
      startTime: argv.startTime,
      endTime: argv.endTime,
      repeat: argv.repeat,
      serverLog: argv.serverLog,
    });
    const lines = figures.map(
      (f) =>
        `  ${f.format}${argv.repeat > 1 ? ` (export ${f.run} of ${argv.repeat} from one server)` : ''}: ${f.trips} trips, ${(f.bytes / 1e6).toFixed(1)} MB in ${f.seconds.toFixed(2)} s = ${Math.round(f.tripsPerSecond)} trips/s; ` +
        `first byte ${f.firstByteSeconds.toFixed(2)} s; API peak RSS ${mib(f.serverPeakRssBytes)} (${mib(f.serverIdleRssBytes)} before the export); ` +
        `client peak RSS ${mib(f.clientPeakRssBytes)}; load average ${f.loadAverage[0].toFixed(1)} -> ${f.loadAverage[1].toFixed(1)}\n` +
        `    ${f.batches} batches; the API's memory after batch ${f.memoryAt.map((m) => `${m.batch}: rss ${m.rssMiB}, V8 heap ${m.heapTotalMiB} (${m.heapUsedMiB} used), external ${m.externalMiB}, DuckDB ${m.exportDuckdbMiB} MiB`).join('; ')}`,
    );
    return { result: { figures }, summary: lines.join('\n') };
  });
  process.exit();
}
