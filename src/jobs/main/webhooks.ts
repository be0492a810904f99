// `node jobs/webhooks.js`: the operator's tool for webhook events: list, show every attempt, replay
// dead letters, counts.
import type { Arguments } from 'yargs';
import { runJob } from '../cli.js';
import { jobArgs, type JobCommand } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { formatWebhooks } from '../webhooks-format.js';
import type { OperatorRequest } from '../../webhooks/operations.js';
import type { EventStatus } from '../../webhooks/outbox.js';

interface WebhooksArgs {
  dataDir?: string;
  json: boolean;
  app?: string;
  status?: EventStatus;
  limit: number;
  eventId?: string | number;
  since?: string;
}

// The code that does the work (and DuckDB) is imported when a command runs, once yargs has parsed
// it: --help and a refused flag cost a Node start only.
const command =
  (name: string, request: (argv: WebhooksArgs) => OperatorRequest) =>
  (parsed: Arguments): Promise<void> => {
    const argv = parsed as unknown as WebhooksArgs;
    return runJob(`webhooks ${name}`, argv.json, async () => {
      const req = request(argv);
      const [{ runWebhooksCommand }, { appsOf }] = await Promise.all([
        import('../webhooks.js'),
        import('../data-dir.js'),
      ]);
      const dataDir = resolveDataDir(argv.dataDir);
      await appsOf(dataDir);
      const result = await runWebhooksCommand(dataDir, req);
      return { result, summary: formatWebhooks(req, result) };
    });
  };

const commands: JobCommand[] = [
  {
    command: 'counts',
    describe: 'events per app and status, what is due, open breakers',
    handler: command('counts', () => ({ op: 'counts' })),
  },
  {
    command: 'list',
    describe: 'events, newest first',
    builder: (y) =>
      y
        .option('app', { type: 'string', describe: 'only this appId' })
        .option('status', { choices: ['pending', 'failed', 'delivered'], describe: 'failed = dead letters' })
        .option('limit', { type: 'number', default: 50, describe: 'at most this many events' }),
    handler: command('list', (a) => ({ op: 'list', appId: a.app ?? null, status: a.status ?? null, limit: a.limit })),
  },
  {
    command: 'show <eventId>',
    describe: 'one event, its body and every attempt (time, status or error, duration)',
    handler: command('show', (a) => ({ op: 'show', eventId: String(a.eventId) })),
  },
  {
    command: 'replay [eventId]',
    describe: 'send a dead letter (or a delivered event) once more; or every dead letter of --app since --since',
    builder: (y) =>
      y
        .option('app', { type: 'string', describe: 'every dead letter of this appId' })
        .option('since', { type: 'string', describe: 'events created at or after (YYYY-MM-DD or ISO time)' }),
    handler: command('replay', (a) => ({
      op: 'replay',
      eventId: (a.eventId ?? null) as string | null,
      appId: a.app ?? null,
      since: a.since ?? null,
    })),
  },
];

/** Parses webhooks.js's command and flags and runs the command. */
export async function main(): Promise<void> {
  await jobArgs(
    'webhooks',
    "$0 <command> [options]\n\nThe operator's view of the webhook outbox: counts, events, every attempt of one, replays.",
    { commands, stateStore: true },
  ).parseAsync();
}
