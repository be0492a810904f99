// The metrics flags the jobs share, in a module of their own: a job declares its flags and parses
// before it loads the code that does its work (and DuckDB), so `--help` and a refused flag cost a
// Node start only (src/jobs/metrics.ts and src/metrics/options.ts read what they set).

/** yargs option of the batch jobs. */
export const METRICS_DIR_FLAG = {
  'metrics-dir': {
    type: 'string',
    describe:
      "folder node exporter's textfile collector reads; the run's metrics go to driving_job_<job>.prom there (env DRIVING_METRICS_DIR, default <data-dir>/metrics)",
  },
} as const;

/** yargs options shared by serve.js and deliver.js. */
export const METRICS_FLAGS = {
  metrics: {
    type: 'boolean',
    default: true,
    describe: 'serve GET /metrics (Prometheus) on a listener of its own; --no-metrics: none',
  },
  'metrics-port': {
    type: 'number',
    describe: 'port of the metrics listener (default: serve 9464, deliver 9465; 0: any free port)',
  },
  'metrics-host': {
    type: 'string',
    default: '127.0.0.1',
    describe: 'address of the metrics listener (loopback by default: not public)',
  },
} as const;
