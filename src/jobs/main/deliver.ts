// `node jobs/deliver.js`: the webhook deliverer: owns the outbox, takes the jobs' event files in,
// delivers them signed, retries on the interface's schedule, dead-letters what is never answered.
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';
import { METRICS_FLAGS } from '../flags.js';

/** Parses deliver.js's flags, delivers (until a signal, or once) and sets the exit code. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'deliver',
    '$0 [--once]\n\nRuns until SIGTERM/SIGINT (or, with --once, delivers what is due now and exits).\nSettings: DRIVING_WEBHOOK_* variables (README, "Webhooks").',
    { stateStore: true },
  )
    .option('once', { type: 'boolean', default: false, describe: 'deliver what is due now, then exit (for cron)' })
    .option('concurrency', {
      type: 'number',
      describe: 'attempts in flight at once (env DRIVING_WEBHOOK_CONCURRENCY, default 32)',
    })
    .option('per-endpoint', {
      type: 'number',
      describe: 'attempts in flight per endpoint (env DRIVING_WEBHOOK_PER_ENDPOINT, default 4)',
    })
    .option('allow-loopback', {
      type: 'boolean',
      describe: 'allow http and loopback receivers, for local testing (env DRIVING_WEBHOOK_ALLOW_LOOPBACK)',
    })
    .options(METRICS_FLAGS)
    .check((a) => {
      const whole = (value: unknown, min: number, max = Infinity): boolean =>
        typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
      if (a.metricsPort !== undefined && !whole(a.metricsPort, 0, 65535))
        throw new Error('--metrics-port must be a whole number from 0 to 65535');
      for (const name of ['concurrency', 'perEndpoint'] as const) {
        if (a[name] !== undefined && !whole(a[name], 1))
          throw new Error(`--${name === 'perEndpoint' ? 'per-endpoint' : name} must be a whole number of at least 1`);
      }
      return true;
    })
    .parseSync();

  const settings = {
    ...(argv.concurrency !== undefined ? { concurrency: argv.concurrency } : {}),
    ...(argv.perEndpoint !== undefined ? { perEndpoint: argv.perEndpoint } : {}),
    ...(argv.allowLoopback !== undefined ? { allowLoopback: argv.allowLoopback } : {}),
  };
  const stop = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        stderrProgress(`deliver: ${signal}: finishing the attempts in flight`);
        resolve();
      });
  });

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const [{ runDeliver, describeCounters }, { appsOf }, { register }, { processMetrics }, { startMetrics }] =
    await Promise.all([
      import('../deliver.js'),
      import('../data-dir.js'),
      import('prom-client'),
      import('../../metrics/api.js'),
      import('../../metrics/options.js'),
    ]);

  // a cron run (--once) is over before a scrape comes: metrics only on a port given for it
  const measured = argv.metrics && (!argv.once || argv.metricsPort !== undefined);
  await runJob('deliver', argv.json, async () => {
    await appsOf(resolveDataDir(argv.dataDir));
    if (measured) processMetrics(register);
    const metrics = measured ? await startMetrics('deliver', argv, register) : null;
    try {
      const result = await runDeliver({
        dataDir: resolveDataDir(argv.dataDir),
        once: argv.once,
        stop,
        settings,
        progress: stderrProgress,
        metrics: metrics ? register : undefined,
      });
      return { result, summary: `${describeCounters(result)} in ${result.seconds.toFixed(1)} s` };
    } finally {
      await metrics?.close();
    }
  });
  process.exit();
}
