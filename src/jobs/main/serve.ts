// `node jobs/serve.js`: the HTTP API: serves the published snapshot read-only; apps, accounts and
// tokens live in the shared state store. With --workers N, a primary runs N worker processes on one
// port. jobs/serve.js imports threadpool.js before this module.
import { availableParallelism } from 'node:os';
import { resolveDataDir } from '../../data-folder.js';
import { exportSetting, flagOrSetting, setting } from '../../settings.js';
import { reportFailure, wholeNumbers } from '../cli.js';
import { jobArgs } from '../args.js';
import { assertPortFree } from '../port-free.js';
import { METRICS_FLAGS } from '../flags.js';
import { runPrimary, isPrimary, DRAIN_MS } from '../../api/http/cluster.js';
import { drainOnSignal } from '../../api/http/drain.js';
import type { Follower } from '../../follow/follower.js';
import { cellFolder, cellNameProblem, currentCell } from '../../cell.js';
import { InputError } from '../../errors.js';

/**
 * `--follow` as given: one SOURCE (the job machine of a deployment without cells), or NAME=SOURCE
 * once per cell served (docs/operating.md, Cells).
 */
function followsOf(values: string[]): { single: string | null; cells: Array<{ name: string; source: string }> } {
  const named = values.map((v) => /^([^=/:]+)=(.+)$/.exec(v));
  if (values.length === 1 && !named[0]) return { single: values[0] as string, cells: [] };
  const cells: Array<{ name: string; source: string }> = [];
  for (const [i, m] of named.entries()) {
    if (!m)
      throw new InputError(
        `--follow ${values[i]}: with several, each is NAME=SOURCE (a cell's name and its job machine's folder)`,
      );
    const [, name = '', source = ''] = m;
    const problem = cellNameProblem(name);
    if (problem) throw new InputError(`--follow ${values[i]}: ${problem}`);
    if (cells.some((c) => c.name === name)) throw new InputError(`--follow: cell ${name} is named twice`);
    cells.push({ name, source });
  }
  return { single: null, cells };
}

/** The machine's follower of the job machine's publishes, started before the API opens (it copies the first snapshot). */
async function startFollower(source: string, dataDir: string, log: (line: string) => void): Promise<Follower> {
  const [{ mkdirSync }, { Follower }] = await Promise.all([import('node:fs'), import('../../follow/follower.js')]);
  // a new API machine starts from an empty folder: its copy is made here
  mkdirSync(dataDir, { recursive: true });
  const follower = new Follower({ source, dataDir, pollMs: setting('DRIVING_FOLLOW_POLL'), log });
  follower.start();
  log(`serve: following ${source}`);
  return follower;
}

/** Parses serve.js's flags and serves (a primary of workers, or one process) until a signal. */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'serve',
    '$0 [--port 8080] [--host 127.0.0.1] [--data-dir DIR] [--workers N] [--database-url URL] [--redis-url URL] [--serving pack|sql] [--follow SOURCE] [--metrics-port 9464] [--no-log]\n\nServes the published snapshot read-only over HTTP (README, "API"); runs until SIGTERM/SIGINT (drains: finishes what it holds within 10 s, exits 0); SIGHUP restarts the workers one at a time.',
    { jsonHelp: 'a failure to start as JSON on stdout (the request log is JSON lines already)', stateStore: true },
  )
    .option('port', { type: 'number', describe: 'port to listen on (env PORT, default 8080)' })
    .option('host', { type: 'string', describe: 'address to listen on (env HOST, default 127.0.0.1)' })
    .option('connections', { type: 'number', default: 4, describe: 'DuckDB connections to the snapshot' })
    .option('serving', {
      choices: ['pack', 'sql'] as const,
      describe:
        'answer trips, statistics and scores from the serving pack, or always by SQL (env DRIVING_API_SERVING, default pack)',
    })
    .option('extras-reads', {
      choices: ['sync', 'async'] as const,
      describe:
        "read a trip detail's events on the event loop, or through the thread pool when they far exceed the page cache (env DRIVING_PACK_EXTRAS_READS, default sync)",
    })
    .option('pack-warm', {
      choices: ['rows', 'all', 'none'] as const,
      describe:
        "read into the page cache when a snapshot opens: the serving pack's indexes and rows, those and the trip events, or nothing (env DRIVING_PACK_WARM, default rows)",
    })
    .option('follow', {
      type: 'string',
      array: true,
      describe:
        "an API machine: copy each publish of the job machine's data folder SOURCE (host:/srv/driving/data, rsync://host:port/module, or a path) with rsync and serve it; with cells, NAME=SOURCE, once per cell served (env DRIVING_FOLLOW, several separated by spaces)",
    })
    .option('log', { type: 'boolean', default: true, describe: 'one JSON log line per request' })
    .option('workers', {
      type: 'number',
      describe:
        'worker processes on the one port (env DRIVING_API_WORKERS, default one per core); 1: no primary, the process serves itself',
    })
    .option('redis-url', {
      type: 'string',
      describe: 'Redis URL: rate limits counted there, for every process on every machine (env DRIVING_REDIS_URL)',
    })
    .options(METRICS_FLAGS)
    .check(
      wholeNumbers({
        port: { min: 0, max: 65535 },
        'metrics-port': { min: 0, max: 65535 },
        connections: { min: 1, max: 64 },
        workers: { min: 1, max: 256 },
      }),
    )
    .parseSync();

  const log = (line: string): void => void process.stderr.write(`${line}\n`);

  try {
    // a flag not given is its variable's (src/settings.ts), checked here: a bad one is exit 2, named
    const port = argv.port ?? setting('PORT');
    const host = argv.host ?? setting('HOST');
    const workers = argv.workers ?? setting('DRIVING_API_WORKERS') ?? availableParallelism();
    const serving = argv.serving ?? setting('DRIVING_API_SERVING');
    const extrasReads = argv.extrasReads ?? setting('DRIVING_PACK_EXTRAS_READS');
    const packWarm = argv.packWarm ?? setting('DRIVING_PACK_WARM');
    const redisUrl = flagOrSetting(argv.redisUrl, 'DRIVING_REDIS_URL');
    if (redisUrl) exportSetting('DRIVING_REDIS_URL', redisUrl);
    const dataDir = resolveDataDir(argv.dataDir);
    const follows = followsOf(argv.follow ?? (setting('DRIVING_FOLLOW') ?? '').split(/\s+/).filter(Boolean));
    const follow = follows.single;
    const cell = currentCell();
    // a taken port is said before any work, once (the primary; its workers share its port)
    if (isPrimary()) await assertPortFree(port, host, 'another serve.js or npm start?');
    // The code that does the work is imported only now, and only what this process runs: a refused
    // flag or a taken port costs a Node start, and a cluster's primary never loads the API.
    const [{ resolveDatabaseUrl }, { appsOf }, { register }, { startMetrics }] = await Promise.all([
      import('../../state/open.js'),
      import('../data-dir.js'),
      import('prom-client'),
      import('../../metrics/options.js'),
    ]);
    // --database-url is in DATABASE_URL already (src/jobs/args.ts), which the workers inherit
    const databaseUrl = resolveDatabaseUrl(argv.databaseUrl as string | undefined);
    // one follower a machine, in the process that outlives its workers (src/follow/follower.ts)
    const followers = isPrimary()
      ? await Promise.all([
          ...(follow ? [startFollower(follow, dataDir, log)] : []),
          ...follows.cells.map((c) => startFollower(c.source, cellFolder(dataDir, c.name), log)),
        ])
      : [];
    const stopFollowers = () => Promise.all(followers.map((f) => f.stop()));
    if (isPrimary() && workers > 1) {
      // checked once here, so a mistyped folder is one message and exit 2, not N dying workers
      await appsOf(dataDir);
      // the primary serves /metrics, summing its workers' series (prom-client's AggregatorRegistry)
      if (argv.metrics) await startMetrics('serve', argv, 'cluster');
      runPrimary({ workers, log, onStop: () => void stopFollowers() });
    } else {
      const [{ createApi }, { processMetrics }, { answerClusterScrapes }] = await Promise.all([
        import('../../api/http/server.js'),
        import('../../metrics/api.js'),
        import('../../metrics/server.js'),
      ]);
      if (isPrimary()) await appsOf(dataDir);
      // the global registry: the one a cluster's primary aggregates from its workers
      if (argv.metrics) processMetrics(register);
      if (argv.metrics && !isPrimary()) answerClusterScrapes();
      const api = await createApi({
        dataDir,
        logger: argv.log,
        connections: argv.connections,
        serving,
        extrasReads,
        packWarm,
        databaseUrl,
        redisUrl: redisUrl ?? null,
        follow: follow ?? null,
        cells: follows.cells.length > 0 ? { followed: follows.cells.map((c) => c.name) } : cell ? { own: cell } : null,
        sharedRateLimits: isPrimary() ? 0 : workers,
        metrics: argv.metrics ? register : undefined,
      });
      const metrics = isPrimary() ? await startMetrics('serve', argv, register) : null;
      drainOnSignal(
        api.app,
        async () => {
          await Promise.all([api.close(), metrics?.close(), stopFollowers()]);
        },
        // the process's lines while it drains through the API's logger, as its other lines (src/api/http/log.ts)
        { drainMs: DRAIN_MS, log: (line) => api.app.log.info(line) },
      );
      const address = await api.app.listen({ port, host });
      if (isPrimary()) log(`serve: listening on ${address}`);
    }
  } catch (error) {
    // the port taken: busy (3)
    process.exit(reportFailure('serve', error, argv.json));
  }
}
