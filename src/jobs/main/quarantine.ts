// `node jobs/quarantine.js`: the operator's view of what loads set aside: rejected records and
// quarantined events, by date, reason and source (file and line), and one whole with its raw line.
import type { Arguments } from 'yargs';
import { runJob } from '../cli.js';
import { jobArgs, type JobCommand } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { formatQuarantine } from '../quarantine-format.js';
import type { QuarantineRequest } from '../quarantine.js';

interface QuarantineArgs {
  dataDir?: string;
  json: boolean;
  date?: string;
  reason?: string;
  kind?: 'record' | 'event';
  app?: string;
  limit: number;
  id?: string | number;
}

// The code that does the work (and DuckDB) is imported when a command runs, once yargs has parsed
// it: --help and a refused flag cost a Node start only.
const command =
  (name: string, request: (argv: QuarantineArgs) => QuarantineRequest) =>
  (parsed: Arguments): Promise<void> => {
    const argv = parsed as unknown as QuarantineArgs;
    return runJob(`quarantine ${name}`, argv.json, async () => {
      const [{ appsOf }, { runQuarantine }] = await Promise.all([import('../data-dir.js'), import('../quarantine.js')]);
      const dataDir = resolveDataDir(argv.dataDir);
      await appsOf(dataDir);
      const result = await runQuarantine(dataDir, request(argv));
      return { result, summary: formatQuarantine(result) };
    });
  };

const commands: JobCommand[] = [
  {
    command: 'list',
    describe: 'quarantined records and events, newest load first: id, load time, kind, reason, file:line (the default)',
    isDefault: true,
    builder: (y) =>
      y
        .option('date', { type: 'string', describe: 'only those of loads on this UTC day (YYYY-MM-DD)' })
        .option('reason', { type: 'string', describe: 'only this reason (e.g. invalid_json, unknown_event_type)' })
        .option('kind', { choices: ['record', 'event'], describe: 'only rejected records, or only quarantined events' })
        .option('app', { type: 'string', describe: 'only this appId' })
        .option('limit', { type: 'number', default: 50, describe: 'at most this many (1 to 100000)' }),
    handler: command('list', (a) => ({
      op: 'list',
      date: a.date ?? null,
      reason: a.reason ?? null,
      kind: a.kind ?? null,
      appId: a.app ?? null,
      limit: a.limit,
    })),
  },
  {
    command: 'show <id>',
    describe: 'one of them whole: its reason, file and line, and the raw line (or event) as delivered',
    builder: (y) => y.positional('id', { type: 'string', describe: 'as list shows it, e.g. 12-345 or 12-345-e1' }),
    handler: command('show', (a) => ({ op: 'show', id: String(a.id) })),
  },
];

/** Parses quarantine.js's command and flags and runs the command. */
export async function main(): Promise<void> {
  await jobArgs(
    'quarantine',
    '$0 <command> [options]\n\nWhat loads set aside: records rejected whole and events quarantined (their trips kept), read from the warehouse read-only.',
    { commands, stateStore: true },
  ).parseAsync();
}
