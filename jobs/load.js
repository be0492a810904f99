#!/usr/bin/env node
// Loads trip files (NDJSON, gzipped NDJSON, Parquet) into the warehouse and publishes.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { resolveDataDir } from '../dist/config.js';
import { runLoad } from '../dist/jobs/load.js';
import { stderrProgress } from '../dist/progress.js';
import { loadSummary } from '../dist/jobs/summaries.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('load')
  .usage('$0 [--input PATH ...]\n\nLoads what is new in the landing area, or the given files/folders, then publishes.')
  .option('input', { type: 'string', array: true, describe: 'file or folder to load (default: the landing area)' })
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false, describe: 'print the load report as JSON' })
  .strict()
  .fail(usageFailure('load'))
  .parseSync();

await runJob('load', argv.json, async () => {
  const result = await runLoad({ dataDir: resolveDataDir(argv.dataDir), inputs: argv.input, progress: stderrProgress });
  // files that could not be read are set aside with their reason; the rest is loaded and published
  return { result, summary: loadSummary(result), exitCode: result.totals.filesFailed > 0 ? 2 : 0 };
});
