import {
  boolean,
  bytes,
  duration,
  durations,
  integer,
  oneOf,
  text,
  toggle,
  url,
  type Setting,
} from './setting-kinds.js';

/**
 * Every setting of the service, once: the environment variable, what it may hold, its default, the
 * flag that wins over it and what it does. Nothing else under src/ reads process.env for a setting
 * (test/core/settings.test.ts checks that, and that docs/configuration.md lists exactly these).
 */
export const SETTINGS = {
  // where things are
  DRIVING_DATA_DIR: text('data', { kind: 'path', shown: './data', flag: '--data-dir', describe: 'the data folder' }),
  DATABASE_URL: url(['postgres', 'postgresql'], {
    flag: '--database-url',
    describe:
      'PostgreSQL for the shared state store (several machines); unset: `state/state.sqlite` in the data folder',
  }),
  DRIVING_CELL: text(null, {
    flag: '--cell',
    describe:
      'the cell this machine is (docs/operating.md, Cells): its jobs load, score and purge only the drivers given to it; needs DATABASE_URL; unset: one cell holds every driver',
  }),
  DRIVING_CELL_MOVE_GRACE: duration('1m', {
    describe:
      "a driver moved to another cell (cells.js move) is erased from its old cell this long after the new one's publish serves it, so API machines have caught up with that publish",
  }),
  DRIVING_METRICS_DIR: text(null, {
    kind: 'path',
    shown: '`<data-dir>/metrics`',
    flag: '--metrics-dir',
    describe:
      "folder of node exporter's textfile collector, where load, score, purge and export write their run's metrics",
  }),
  DRIVING_PG_BIN: text(null, {
    kind: 'path',
    shown: 'PATH, then `/usr/lib/postgresql/15/bin`',
    flag: '--pg-bin',
    describe: 'folder of `pg_dump` and `pg_restore`, for backup.js and restore.js of a PostgreSQL state store',
  }),
  DRIVING_DEBUG: toggle({ describe: "a job's internal failure (exit 1) prints its stack" }),
  DRIVING_SQL_TRACE: toggle({ describe: "each SQL statement's time goes to stderr" }),
  DRIVING_DUCKDB_THREADS: integer(0, {
    shown: '0 (one per core)',
    describe: "threads of each DuckDB database a process opens; 0: DuckDB's own default, one per core",
  }),
  DUCKDB_JE_MALLOC_CONF: text(null, {
    shown: 'unset (`load.js --watch`: `dirty_decay_ms:60000,muzzy_decay_ms:60000`)',
    describe:
      "options of DuckDB's allocator (jemalloc, Linux x64), read once as DuckDB loads; unset, freed memory goes back to the system after a second, except in the watch, which keeps it a minute for its next batch",
  }),

  // the batch jobs
  DRIVING_MEMORY_LIMIT: bytes('2.5GB', {
    describe: "DuckDB's memory limit for jobs (RSS runs up to about 1 GB above it); larger loads spill to disk",
  }),
  DRIVING_POINTS_RETENTION_DAYS: integer(30, {
    describe:
      "days raw points (and routes) are kept after their trip's date; serve.js warns an SDK upload older than that (route_beyond_retention): give it the jobs' value",
  }),
  DRIVING_LOAD_CONCURRENCY: integer(2, {
    raise: 1,
    describe: 'input files a load derives at once, each on its own DuckDB connection',
  }),
  DRIVING_LOAD_POINTS_PER_PART: integer(8_000_000, {
    raise: 1,
    describe: 'points a load derives at once (a file with more is derived a part at a time)',
  }),
  DRIVING_LOAD_UPLOAD_BATCH_BYTES: integer(128 * 2 ** 20, {
    unit: 'bytes',
    describe: 'bytes of SDK upload files a load puts together into one batch file (0: none)',
  }),
  DRIVING_LANDING_QUIET_MS: integer(3_000, {
    unit: 'milliseconds',
    describe:
      'the continuous load takes a partner file only once it has not been written for this long (SDK uploads at once; 0: at once too)',
  }),
  DRIVING_LOAD_SLICE_BYTES: integer(32 * 2 ** 20, {
    unit: 'bytes',
    describe:
      'a landing NDJSON file larger than this is loaded in slices of about this size, the continuous load taking one a batch so that SDK uploads publish between them (0: never sliced)',
  }),
  DRIVING_ARCHIVE_MERGE_FILES: integer(16, {
    min: 2,
    describe:
      "archived landing files of a day (or merged files under 256 MiB) that make the continuous load merge them into one gzip file while it is idle; load.js merges each day's whole",
  }),
  DRIVING_PUBLISH_LOCK_WAIT_MS: integer(30_000, {
    unit: 'milliseconds',
    describe: 'how long a publish waits for API processes to let go of the standby slot',
  }),
  DRIVING_WAREHOUSE_LOCK_WAIT_MS: integer(60_000, {
    unit: 'milliseconds',
    describe: 'how long a job waits for another job to let go of the warehouse before it exits 3',
  }),
  DRIVING_SERVING_PACK_STEP_ROWS: integer(250_000, { min: 1, describe: 'trips per step of a serving pack build' }),
  DRIVING_GENERATE_PART_TRIPS: integer(250, {
    min: 1,
    describe: 'trips generate.js builds and writes at a time (bounds its memory, never changes a byte)',
  }),
  DRIVING_GENERATE_MEMORY_LIMIT: bytes('512MB', { describe: "DuckDB's memory limit for generate.js" }),

  // serve.js
  PORT: integer(8080, { max: 65535, flag: '--port', describe: 'port serve.js listens on' }),
  HOST: text('127.0.0.1', { flag: '--host', describe: 'address serve.js listens on' }),
  DRIVING_API_WORKERS: integer(null, {
    min: 1,
    max: 256,
    shown: 'one per core',
    flag: '--workers',
    describe: 'worker processes of serve.js on the one port; 1: no primary, the process serves itself',
  }),
  DRIVING_FOLLOW: text(null, {
    flag: '--follow',
    describe:
      "an API machine: the job machine's data folder as rsync names it (`host:/srv/driving/data`, `rsync://host:port/module`, a path), whose publishes serve.js copies and serves",
  }),
  DRIVING_FOLLOW_POLL: duration('1s', {
    describe: "with --follow: how often the job machine's manifest is checked for a new publish",
  }),
  DRIVING_CELL_ROUTER: url(['http', 'https'], {
    describe:
      "an API machine serving some cells: where a request for a driver of another cell is sent, with `X-Driving-Cell: NAME` (the balancer's internal front door, deploy/haproxy-cells.cfg); unset: such a request is answered 503 `cell_not_served`",
  }),
  DRIVING_API_SERVING: oneOf(['pack', 'sql'], 'pack', {
    flag: '--serving',
    describe: 'answer trips, statistics and scores from the serving pack, or always by SQL',
  }),
  DRIVING_PACK_EXTRAS_READS: oneOf(['sync', 'async'], 'sync', {
    flag: '--extras-reads',
    describe: "read a trip detail's events on the event loop, or through the thread pool",
  }),
  DRIVING_PACK_WARM: oneOf(['rows', 'all', 'none'], 'rows', {
    flag: '--pack-warm',
    describe:
      "what a snapshot's opening reads into the page cache: the serving pack's indexes and rows, those and the trip events, or nothing",
  }),
  DRIVING_REDIS_URL: url(['redis', 'rediss'], {
    flag: '--redis-url',
    shown: 'unset (`state/rate.sqlite`)',
    describe:
      "Redis for rate limits over several machines (if down, each counts alone); unset: the machine's workers count together",
  }),
  DRIVING_REDIS_START_WAIT_MS: integer(2_500, {
    unit: 'milliseconds',
    describe: 'with Redis: how long an API process waits at start for it before it opens',
  }),
  UV_THREADPOOL_SIZE: integer(16, {
    min: 1,
    max: 1024,
    describe: "threads of libuv's pool in serve.js and deliver.js (DuckDB calls, file I/O, crypto)",
  }),
  DRIVING_API_MEMORY_LIMIT: bytes('1GB', { describe: "DuckDB's memory for one API process's snapshot" }),
  DRIVING_API_EXPORT_MEMORY_LIMIT: bytes('32MB', {
    describe:
      "DuckDB's memory for the bulk export's own instance on the snapshot (below about 24MB a batch's queries run out of memory)",
  }),
  DRIVING_API_EXPORT_BATCH_TRIPS: integer(1_000, { raise: 1, describe: 'trips per record batch of the bulk export' }),
  DRIVING_API_EXPORT_MEMORY_LOG: toggle({ describe: 'the bulk export logs its memory after each batch' }),

  // the API's limits (docs/api-limits.md); a 0 refuses everything, except where it switches a gate off
  DRIVING_API_MAX_CONNECTIONS: integer(4096, {
    min: 1,
    describe: "open connections in all (keep below the process's file limit)",
  }),
  DRIVING_API_MAX_CONNECTIONS_PER_ADDRESS: integer(256, { min: 1, describe: 'open connections from one address' }),
  DRIVING_API_HEADERS_TIMEOUT_MS: integer(10_000, {
    min: 1,
    unit: 'milliseconds',
    describe: 'time to send the request line and headers (408)',
  }),
  DRIVING_API_REQUEST_TIMEOUT_MS: integer(60_000, {
    min: 1,
    unit: 'milliseconds',
    describe: 'time to send the whole request, body included (408)',
  }),
  DRIVING_API_IDLE_TIMEOUT_MS: integer(30_000, {
    unit: 'milliseconds',
    describe: 'a connection with no traffic is closed (0: never)',
  }),
  DRIVING_API_KEEP_ALIVE_TIMEOUT_MS: integer(5_000, {
    min: 1,
    unit: 'milliseconds',
    describe: 'a kept-alive connection waits this long for its next request',
  }),
  DRIVING_API_MAX_HEADER_BYTES: integer(16_384, {
    min: 1,
    unit: 'bytes',
    describe: 'request line and headers together (431)',
  }),
  DRIVING_API_BODY_LIMIT_BYTES: integer(16_384, {
    min: 1,
    unit: 'bytes',
    describe: 'body of every route but the SDK upload (413)',
  }),
  DRIVING_API_SDK_BODY_LIMIT_BYTES: integer(8 * 1024 * 1024, {
    min: 1,
    unit: 'bytes',
    describe: 'body of the SDK upload, at most 500 records (413)',
  }),
  DRIVING_API_MAX_JSON_DEPTH: integer(32, { min: 1, describe: 'nesting of arrays and objects in a JSON body (400)' }),
  DRIVING_API_RATE_WINDOW_MS: integer(60_000, {
    min: 1,
    unit: 'milliseconds',
    describe: "length of a token's or an address's rate-limit window",
  }),
  DRIVING_API_APP_RATE_WINDOW_MS: integer(1_000, {
    min: 1,
    unit: 'milliseconds',
    describe: "length of an app's rate-limit window",
  }),
  DRIVING_API_RATE_PER_APP: integer(1_000, {
    min: 1,
    describe: "cost units per app window with the app's API keys, all of them together (429)",
  }),
  DRIVING_API_RATE_PER_TOKEN: integer(120, { min: 1, describe: 'requests per window with one passport token (429)' }),
  DRIVING_API_RATE_PER_ADDRESS: integer(1_200, {
    min: 1,
    describe: 'requests per window from one address without a valid credential (429)',
  }),
  DRIVING_API_MAX_IN_FLIGHT: integer(512, { describe: 'requests answered at once, beyond it 503 (0: no gate)' }),
  DRIVING_API_MAX_IN_FLIGHT_PER_APP: integer(32, {
    describe: 'requests of one app answered at once, beyond it 429 (0: no cap)',
  }),
  DRIVING_API_MAX_EVENT_LOOP_DELAY_MS: integer(1_000, {
    unit: 'milliseconds',
    describe: 'mean event-loop delay above which requests are shed with 503 (0: not checked)',
  }),
  DRIVING_API_OVERLOAD_RETRY_AFTER_SECONDS: integer(2, {
    unit: 'seconds',
    describe: '`Retry-After` of a 503 `overloaded` or `busy`',
  }),
  DRIVING_API_STORAGE_RETRY_AFTER_SECONDS: integer(30, {
    min: 1,
    unit: 'seconds',
    describe: '`Retry-After` of a 503 `storage_full`: a write the disk had no room for (nothing was stored)',
  }),
  DRIVING_API_ROUTE_WORK_BUDGET: integer(20_000_000, {
    min: 1,
    describe: "distance evaluations one route's simplification may spend (503 `busy`)",
  }),
  DRIVING_API_ROUTE_WORK_SLICE: integer(250_000, {
    min: 1,
    describe: 'distance evaluations of a route between two turns of the event loop',
  }),
  DRIVING_API_ROUTE_WORK_CONCURRENT: integer(4, {
    min: 1,
    describe: 'routes worked on across turns of the event loop at once (503 `busy`)',
  }),

  // the webhook deliverer (docs/webhooks.md)
  DRIVING_WEBHOOK_TIMEOUT: duration('10s', { describe: 'an attempt fails without a complete answer in this time' }),
  DRIVING_WEBHOOK_SCHEDULE: durations('1m,5m,20m,60m,6h,24h', {
    most: 50,
    describe: 'waits after each failure; after the last, dead letter',
  }),
  DRIVING_WEBHOOK_CONCURRENCY: integer(32, { min: 1, flag: '--concurrency', describe: 'attempts in flight' }),
  DRIVING_WEBHOOK_PER_ENDPOINT: integer(4, {
    min: 1,
    flag: '--per-endpoint',
    describe: 'attempts in flight per endpoint URL',
  }),
  DRIVING_WEBHOOK_ALLOW_LOOPBACK: boolean({
    flag: '--allow-loopback',
    describe: 'allow `http://` and loopback addresses, for local testing only',
  }),
  DRIVING_WEBHOOK_BREAKER_THRESHOLD: integer(5, {
    min: 1,
    describe: "unanswered attempts in a row that open an endpoint's breaker",
  }),
  DRIVING_WEBHOOK_BREAKER_COOLDOWN: duration('30s', { describe: 'one probe per this while the breaker is open' }),
  DRIVING_WEBHOOK_RETENTION_DAYS: integer(30, {
    describe: 'days finished events are kept, and pending ones of apps without an endpoint',
  }),
  DRIVING_WEBHOOK_DISABLE_AFTER: duration('5d', {
    describe: 'an endpoint that failed every attempt for this long is disabled',
  }),
  DRIVING_WEBHOOK_POLL: duration('1s', { describe: 'how often new event files and due retries are looked for' }),
  DRIVING_WEBHOOK_CA_FILE: text(null, {
    kind: 'path',
    describe: "a PEM CA certificate to trust besides the system's (staging receivers)",
  }),
  DRIVING_WEBHOOK_LEASE_MS: integer(20_000, {
    min: 200,
    unit: 'milliseconds',
    describe: "how long a deliverer's lease lasts unless renewed; a standby takes over within that of a holder's death",
  }),
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<K extends SettingName> = (typeof SETTINGS)[K] extends Setting<infer T> ? T : never;

/** The variables a setting is read from: the process's, or a test's own. */
export type Env = Readonly<Record<string, string | undefined>>;

// the last text read of each setting and its value: a read at a hot path parses once, and a
// process (or a test) that changes the variable gets the new value at its next read
const cache = new Map<SettingName, { raw: string; value: unknown }>();

/**
 * A setting's value: its variable parsed and checked, else its default when unset or empty. A
 * value that is not allowed is an InputError naming the variable, the value and what is allowed.
 * @example setting('DRIVING_API_SERVING') // 'pack'
 */
export function setting<K extends SettingName>(name: K, env: Env = process.env): SettingValue<K> {
  const raw = env[name];
  const declared: Setting<unknown> = SETTINGS[name];
  if (raw === undefined || raw === '') return declared.fallback as SettingValue<K>;
  const hit = cache.get(name);
  if (hit?.raw === raw) return hit.value as SettingValue<K>;
  const value = declared.parse(raw, name);
  cache.set(name, { raw, value });
  return value as SettingValue<K>;
}

/**
 * The value of a flag's text where one was given, checked as its variable is (the error names the
 * flag), else the setting's.
 * @example flagOrSetting(argv.redisUrl, 'DRIVING_REDIS_URL') // null when neither is given
 */
export function flagOrSetting<K extends SettingName>(
  flag: string | undefined | null,
  name: K,
  env?: Env,
): SettingValue<K> {
  if (flag === undefined || flag === null) return setting(name, env);
  const declared: Setting<unknown> = SETTINGS[name];
  return (flag === '' ? declared.fallback : declared.parse(flag, declared.flag ?? name)) as SettingValue<K>;
}

/** Sets a variable for this process and the processes it starts (a flag that its workers must see). */
export function exportSetting(name: SettingName, value: string): void {
  process.env[name] = value;
}

/**
 * Sets a variable the operator left unset (or empty) to `value` (default: its declared default),
 * for a library that reads it itself (libuv, DuckDB's allocator).
 */
export function defaultSetting(name: SettingName, value = String(SETTINGS[name].fallback)): void {
  if ((process.env[name] ?? '') === '') process.env[name] = value;
}

/** docs/configuration.md's table of every setting, one row each, in the order declared above. */
export function settingsTable(): string {
  const cell = (shown: string): string => (/^(unset|off)\b|[` ]/.test(shown) ? shown : `\`${shown}\``);
  const rows = Object.entries(SETTINGS).map(
    ([name, s]: [string, Setting<unknown>]) =>
      `| \`${name}\` | ${cell(s.shown)} | ${s.allowed} | ${s.flag ? `\`${s.flag}\`` : ''} | ${s.describe} |`,
  );
  return ['| Variable | Default | Allowed | Flag | What it does |', '|---|---|---|---|---|', ...rows].join('\n');
}
