#!/usr/bin/env node
// Export throughput: GET /v1/exports/trips read to the end, Arrow and NDJSON, against a data
// folder's published snapshot (e.g. the demo's: node jobs/demo.js --no-serve --data-dir DIR).
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/src/jobs/cli.js';
import { resolveDataDir } from '../dist/src/config.js';
import { benchExport } from '../dist/bench/export-throughput.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('bench-export')
  .usage('$0 --data-dir DIR\n\nTimes the bulk export of every trip of the folder\'s (first) app, in both formats.')
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false })
  .strict()
  .fail(usageFailure('bench-export'))
  .parseSync();

await runJob('bench-export', argv.json, async () => {
  const figures = await benchExport(resolveDataDir(argv.dataDir));
  const lines = figures.map((f) => `  ${f.format}: ${f.trips} trips, ${(f.bytes / 1e6).toFixed(1)} MB in ${f.seconds.toFixed(2)} s = ${Math.round(f.tripsPerSecond)} trips/s; peak RSS ${(f.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
  return { result: { figures }, summary: lines.join('\n') };
});
process.exit();
