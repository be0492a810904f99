#!/usr/bin/env node
// The operator's tool for webhook events: list, show every attempt, replay dead letters, counts.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { resolveDataDir } from '../dist/config.js';
import { runWebhooksCommand } from '../dist/jobs/webhooks.js';
import { formatWebhooks } from '../dist/jobs/webhooks-format.js';
import { appsOf } from '../dist/jobs/data-dir.js';

const COMMANDS = ['counts', 'list', 'show', 'replay'];
// --data-dir and --json are global options (set below, so an unknown command is named alone);
// a command adds only its own
const common = (y) => y;
const command = (name, request) => (argv) =>
  runJob(`webhooks ${name}`, argv.json, async () => {
    const req = request(argv);
    const dataDir = resolveDataDir(argv.dataDir);
    await appsOf(dataDir);
    const result = await runWebhooksCommand(dataDir, req);
    return { result, summary: formatWebhooks(req, result) };
  });

await yargs(hideBin(process.argv))
  .scriptName('webhooks')
  .usage('$0 <command> [options]\n\nThe operator\'s view of the webhook outbox: counts, events, every attempt of one, replays.')
  .option('data-dir', { type: 'string', global: true, describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false, global: true, describe: 'machine-readable output' })
  .command('list', 'events, newest first', (y) => common(y)
    .option('app', { type: 'string', describe: 'only this appId' })
    .option('status', { choices: ['pending', 'failed', 'delivered'], describe: 'failed = dead letters' })
    .option('limit', { type: 'number', default: 50 }),
  command('list', (a) => ({ op: 'list', appId: a.app ?? null, status: a.status ?? null, limit: a.limit })))
  .command('show <eventId>', 'one event, its body and every attempt (time, status or error, duration)', common,
    command('show', (a) => ({ op: 'show', eventId: String(a.eventId) })))
  .command('replay [eventId]', 'send a dead letter (or a delivered event) once more; or every dead letter of --app since --since', (y) => common(y)
    .option('app', { type: 'string' })
    .option('since', { type: 'string', describe: 'events created at or after (YYYY-MM-DD or ISO time)' }),
  command('replay', (a) => ({ op: 'replay', eventId: a.eventId ?? null, appId: a.app ?? null, since: a.since ?? null })))
  .command('counts', 'events per app and status, what is due, open breakers', common, command('counts', () => ({ op: 'counts' })))
  .demandCommand(1, 'a command is needed')
  .strict()
  .fail(usageFailure('webhooks', COMMANDS))
  .parseAsync();
