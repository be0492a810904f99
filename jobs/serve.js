#!/usr/bin/env node
// The HTTP API: serves the published snapshot read-only and owns the passport store.
import './threadpool.js';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { resolveDataDir } from '../dist/config.js';
import { createApi } from '../dist/api/server.js';
import { reportFailure, usageFailure, wholeNumbers } from '../dist/cli.js';
import { appsOf } from '../dist/jobs/data-dir.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('serve')
  .usage('$0 [--port 8080] [--host 127.0.0.1] [--data-dir DIR] [--serving pack|sql] [--no-log]\n\nServes the published snapshot read-only over HTTP (README, "API") and owns the passport store; runs until SIGTERM/SIGINT.')
  .option('port', { type: 'number', default: Number(process.env.PORT ?? 8080) })
  .option('host', { type: 'string', default: process.env.HOST ?? '127.0.0.1' })
  .option('data-dir', { type: 'string', describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('connections', { type: 'number', default: 4, describe: 'DuckDB connections to the snapshot' })
  .option('serving', { choices: ['pack', 'sql'], default: process.env.DRIVING_API_SERVING ?? 'pack', describe: 'answer trips, statistics and scores from the serving pack, or always by SQL (env DRIVING_API_SERVING)' })
  .option('extras-reads', { choices: ['sync', 'async'], default: process.env.DRIVING_PACK_EXTRAS_READS ?? 'sync', describe: 'read a trip detail\'s events on the event loop, or through the thread pool when they far exceed the page cache (env DRIVING_PACK_EXTRAS_READS)' })
  .option('pack-warm', { choices: ['rows', 'all', 'none'], default: process.env.DRIVING_PACK_WARM ?? 'rows', describe: 'read into the page cache when a snapshot opens: the serving pack\'s indexes and rows, those and the trip events, or nothing (env DRIVING_PACK_WARM)' })
  .option('log', { type: 'boolean', default: true, describe: 'one JSON log line per request' })
  .check(wholeNumbers({ port: { min: 0, max: 65535 }, connections: { min: 1, max: 64 } }))
  .strict()
  .fail(usageFailure('serve'))
  .parseSync();

try {
  await appsOf(resolveDataDir(argv.dataDir));
  const api = await createApi({ dataDir: resolveDataDir(argv.dataDir), logger: argv.log, connections: argv.connections, serving: argv.serving, extrasReads: argv.extrasReads, packWarm: argv.packWarm });
  const address = await api.app.listen({ port: argv.port, host: argv.host });
  process.stderr.write(`serve: listening on ${address}\n`);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      api.close().then(() => process.exit(0), () => process.exit(1));
    });
  }
} catch (error) {
  // a second API on the same data finds the passport held, or the port taken: busy (3)
  process.exit(reportFailure('serve', error));
}
