#!/usr/bin/env node
// The webhook deliverer: owns the outbox, takes the jobs' event files in, delivers them signed,
// retries on the interface's schedule, dead-letters what is never answered.
import './threadpool.js';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { resolveDataDir } from '../dist/config.js';
import { runDeliver, describeCounters } from '../dist/jobs/deliver.js';
import { stderrProgress } from '../dist/progress.js';
import { appsOf } from '../dist/jobs/data-dir.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('deliver')
  .usage('$0 [--once]\n\nRuns until SIGTERM/SIGINT (or, with --once, delivers what is due now and exits).\nSettings: DRIVING_WEBHOOK_* variables (README, "Webhooks").')
  .option('once', { type: 'boolean', default: false, describe: 'deliver what is due now, then exit (for cron)' })
  .option('concurrency', { type: 'number', describe: 'attempts in flight at once (env DRIVING_WEBHOOK_CONCURRENCY, default 32)' })
  .option('per-endpoint', { type: 'number', describe: 'attempts in flight per endpoint (env DRIVING_WEBHOOK_PER_ENDPOINT, default 4)' })
  .option('allow-loopback', { type: 'boolean', describe: 'allow http and loopback receivers, for local testing (env DRIVING_WEBHOOK_ALLOW_LOOPBACK)' })
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false, describe: 'print the counts as JSON' })
  .check((a) => {
    for (const name of ['concurrency', 'perEndpoint']) {
      if (a[name] !== undefined && !(Number.isInteger(a[name]) && a[name] >= 1)) throw new Error(`--${name === 'perEndpoint' ? 'per-endpoint' : name} must be a whole number of at least 1`);
    }
    return true;
  })
  .strict()
  .fail(usageFailure('deliver'))
  .parseSync();

const settings = {
  ...(argv.concurrency !== undefined ? { concurrency: argv.concurrency } : {}),
  ...(argv.perEndpoint !== undefined ? { perEndpoint: argv.perEndpoint } : {}),
  ...(argv.allowLoopback !== undefined ? { allowLoopback: argv.allowLoopback } : {}),
};
const stop = new Promise((resolve) => {
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => {
    stderrProgress(`deliver: ${signal}: finishing the attempts in flight`);
    resolve();
  });
});

await runJob('deliver', argv.json, async () => {
  await appsOf(resolveDataDir(argv.dataDir));
  const result = await runDeliver({ dataDir: resolveDataDir(argv.dataDir), once: argv.once, stop, settings, progress: stderrProgress });
  return { result, summary: `${describeCounters(result)} in ${result.seconds.toFixed(1)} s` };
});
process.exit();
