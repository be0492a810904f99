// `npm start`: the whole pipeline on an embedded default (demo app, 50 users x 30 days, load,
// score, publish), then the API on it. jobs/demo.js imports threadpool.js before this module.
import { spawn } from 'node:child_process';
import { repoPath } from '../../repo-root.js';
import { reportFailure, runJob, wholeNumbers } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';
import { demoCurlExamples } from '../demo-examples.js';
import { assertPortFree } from '../port-free.js';
import type { DemoResult } from '../demo.js';

/** What npm tells the demo when it runs it as `npm start` (jobs/demo.js reads it from the environment). */
export interface NpmStart {
  /** `npm_lifecycle_event`: 'start' under `npm start`. */
  lifecycleEvent?: string;
  /** `npm_config_port`: npm keeps a `--port` typed before `--` as its own setting. */
  configPort?: string;
}

/**
 * The demo's arguments with the port of `npm start --port 8081` put back: npm takes `--port` as a
 * setting of its own, sets npm_config_port to 'true' and passes 8081 on as a bare argument (with
 * `--port=8081`, it sets npm_config_port to 8081 and passes nothing). A `--port` that reached the
 * demo wins.
 */
export function withNpmPort(args: string[], npm: NpmStart): string[] {
  if (
    npm.lifecycleEvent !== 'start' ||
    npm.configPort === undefined ||
    args.some((a) => a === '--port' || a.startsWith('--port='))
  )
    return args;
  const [first, ...rest] = args;
  if (npm.configPort === 'true' && first !== undefined && /^\d+$/.test(first)) return ['--port', first, ...rest];
  if (/^\d+$/.test(npm.configPort)) return ['--port', npm.configPort, ...args];
  return args;
}

/** Parses the demo's flags, runs the pipeline and serves the API until a signal. */
export async function main(npm: NpmStart = {}): Promise<void> {
  const argv = jobArgs(
    'demo',
    '$0 [--users 50] [--days 30] [--data-dir DIR] [--port 8080] [--no-serve]\n\nThe whole pipeline on sample data: creates the app "Demo Fleet" (first run), generates trips, loads, scores, publishes, then serves the API.\nRun again, it reuses everything and only catches up.',
    { stateStore: true, argv: withNpmPort(process.argv.slice(2), npm) },
  )
    .option('users', { type: 'number', default: 50, describe: 'sample drivers (first run only)' })
    .option('days', { type: 'number', default: 30, describe: 'days of trips up to yesterday (first run only)' })
    .option('serve', {
      type: 'boolean',
      default: true,
      describe: 'serve the API afterwards (--no-serve to stop after publishing)',
    })
    .option('port', {
      type: 'number',
      default: 8080,
      describe: 'TCP port of the API (0: any free port); a taken one is said before any work (exit 3)',
    })
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'address the API listens on' })
    .check(wholeNumbers({ port: { min: 0, max: 65535 } }))
    .parseSync();

  // a port already taken is said before minutes of generating, loading and publishing, not after
  if (argv.serve) {
    try {
      // under npm a `--port` goes after `--`, or npm keeps it: the hint says the form that works
      const otherPort =
        npm.lifecycleEvent === 'start' ? `run npm start -- --port ${argv.port === 8081 ? 8082 : 8081}` : undefined;
      await assertPortFree(argv.port, argv.host, 'another npm start?', otherPort);
    } catch (error) {
      process.exit(reportFailure('demo', error, argv.json));
    }
  }

  // The code that does the work (and DuckDB) is imported once the arguments are parsed and the port
  // is known free: --help, a refused flag and a taken port cost a Node start only.
  const [{ runDemo }, { createApi }] = await Promise.all([import('../demo.js'), import('../../api/http/server.js')]);

  let demo: DemoResult | undefined;
  await runJob('demo', argv.json, async () => {
    demo = await runDemo({
      dataDir: resolveDataDir(argv.dataDir),
      users: argv.users,
      days: argv.days,
      progress: stderrProgress,
      tty: Boolean(process.stderr.isTTY) && !argv.json,
    });
    const r = demo;
    const p = r.published;
    const lines = [
      `published version ${p.version} (slot ${p.slot}) for app ${r.appId}`,
      `  trips:   ${p.trips} (${p.normalTrips} normal) of ${p.users} users, ${p.firstDay} .. ${p.lastDay}`,
      `  scores:  ${p.scores} served; mean 30-day safety score ${p.meanSafetyScore30}`,
      `  load:    ${r.load.totals.pointsKept} points in ${r.load.seconds.toFixed(1)} s; score in ${r.score.seconds.toFixed(1)} s`,
      `  users:   ${p.sampleUsers.join(', ')} ...`,
      `  API key: ${r.apiKey} (kept in ${r.credentialsFile})`,
    ];
    return { result: r, summary: lines.join('\n') };
  });

  if (argv.serve && process.exitCode === 0 && demo) {
    let api: Awaited<ReturnType<typeof createApi>> | undefined;
    let address: string;
    try {
      api = await createApi({ dataDir: resolveDataDir(argv.dataDir), logger: false });
      address = await api.app.listen({ port: argv.port, host: argv.host });
    } catch (error) {
      // the data is published; only serving it failed (an API already running on it, a taken port)
      await api?.close().catch(() => undefined);
      process.exit(reportFailure('demo', error));
    }
    const served = api;
    const p = demo.published;
    // the continuous load beside the API, as in production: an upload is served seconds after its
    // 202. A process of its own: a publish writes slot files that this process reads.
    const watch = startWatch(resolveDataDir(argv.dataDir));
    process.stdout.write(
      `\nserving on ${address} (Ctrl-C to stop); load.js --watch loads what arrives in the landing area (an SDK upload is served within seconds). Try:\n${demoCurlExamples(address, demo.apiKey, p.sampleUsers[0] ?? 'driver-00001', p.firstDay && p.lastDay ? { first: p.firstDay, last: p.lastDay } : undefined).join('\n')}\n`,
    );
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => void Promise.all([served.close(), watch.stop()]).then(() => process.exit(0)));
    }
  }
}

/** `load.js --watch` on the demo's folder, its lines on this process's stderr; stopped with the demo. */
function startWatch(dataDir: string): { stop(): Promise<void> } {
  const child = spawn(process.execPath, [repoPath('jobs', 'load.js'), '--watch', '--data-dir', dataDir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
