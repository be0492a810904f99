#!/usr/bin/env node
// `npm start`: the whole pipeline on an embedded default (demo app, 50 users x 30 days, load, score).
import '../dist/src/threadpool.js';
import { reportFailure, runJob, wholeNumbers } from '../dist/src/jobs/cli.js';
import { jobArgs } from '../dist/src/jobs/args.js';
import { resolveDataDir } from '../dist/src/config.js';
import { stderrProgress } from '../dist/src/progress.js';
import { demoCurlExamples } from '../dist/src/jobs/demo-examples.js';
import { assertPortFree } from '../dist/src/jobs/port-free.js';

const argv = jobArgs('demo', '$0 [--users 50] [--days 30] [--data-dir DIR] [--port 8080] [--no-serve]\n\nThe whole pipeline on sample data: creates the app "Demo Fleet" (first run), generates trips, loads, scores, publishes, then serves the API.\nRun again, it reuses everything and only catches up.', { stateStore: true })
  .option('users', { type: 'number', default: 50, describe: 'sample drivers (first run only)' })
  .option('days', { type: 'number', default: 30, describe: 'days of trips up to yesterday (first run only)' })
  .option('serve', { type: 'boolean', default: true, describe: 'serve the API afterwards (--no-serve to stop after publishing)' })
  .option('port', { type: 'number', default: 8080, describe: 'TCP port of the API (0: any free port); a taken one is said before any work (exit 3)' })
  .option('host', { type: 'string', default: '127.0.0.1', describe: 'address the API listens on' })
  .check(wholeNumbers({ port: { min: 0, max: 65535 } }))
  .parseSync();

// a port already taken is said before minutes of generating, loading and publishing, not after
if (argv.serve) {
  try {
    await assertPortFree(argv.port, argv.host, 'another npm start?');
  } catch (error) {
    process.exit(reportFailure('demo', error, argv.json));
  }
}

// The code that does the work (and DuckDB) is imported once the arguments are parsed and the port
// is known free: --help, a refused flag and a taken port cost a Node start only.
const [{ runDemo }, { createApi }] = await Promise.all([
  import('../dist/src/jobs/demo.js'),
  import('../dist/src/api/http/server.js'),
]);

let demo;
await runJob('demo', argv.json, async () => {
  demo = await runDemo({ dataDir: resolveDataDir(argv.dataDir), users: argv.users, days: argv.days, progress: stderrProgress });
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
  let api;
  let address;
  try {
    api = await createApi({ dataDir: resolveDataDir(argv.dataDir), logger: false });
    address = await api.app.listen({ port: argv.port, host: argv.host });
  } catch (error) {
    // the data is published; only serving it failed (an API already running on it, a taken port)
    await api?.close().catch(() => undefined);
    process.exit(reportFailure('demo', error));
  }
  process.stdout.write(`\nserving on ${address} (Ctrl-C to stop). Try:\n${demoCurlExamples(address, demo.apiKey, demo.published.sampleUsers[0] ?? 'driver-00001', demo.published.firstDay && demo.published.lastDay ? { first: demo.published.firstDay, last: demo.published.lastDay } : undefined).join('\n')}\n`);
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => api.close().then(() => process.exit(0)));
}
