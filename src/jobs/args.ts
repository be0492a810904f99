import type { Arguments, Argv } from 'yargs';
import type * as Helpers from 'yargs/helpers';
import { pathToFileURL } from 'node:url';
import { usageFailure } from './cli.js';
import { vendored } from '../vendor.js';
import { exportSetting } from '../settings.js';
import { currentCell } from '../cell.js';

// yargs, from the build's one-file bundle of it when there is one (src/vendor.ts): one file with
// its code cache loads far faster than yargs' many modules, at every job's start
const bundle = vendored('yargs');
const { yargs, hideBin } = bundle
  ? ((await import(pathToFileURL(bundle).href)) as {
      yargs: typeof import('yargs').default;
      hideBin: typeof Helpers.hideBin;
    })
  : { yargs: (await import('yargs')).default, hideBin: (await import('yargs/helpers')).hideBin };

export const DATA_DIR_HELP = 'data folder (env DRIVING_DATA_DIR, default ./data)';

/** A sub-command of a job (`apps rotate-key <appId>`): yargs' command string, its help, its own flags. */
export interface JobCommand {
  command: string;
  describe: string;
  builder?: (y: Argv) => Argv;
  /** Run when the job is given no command (`quarantine.js` lists); without one, a command is required. */
  isDefault?: boolean;
  handler: (argv: Arguments) => void | Promise<void>;
}

export interface JobArgsOptions {
  /** The job's sub-commands, if it has any: registered here, so the usage and a usage error list exactly these. */
  commands?: JobCommand[];
  /** What `--data-dir` means for this job, when it is not the service's data folder (the bench's own). */
  dataDirHelp?: string;
  /** What `--json` gives (default: the result as JSON on stdout). */
  jsonHelp?: string;
  /** The arguments (default: the process's). */
  argv?: string[];
  /** The job reads or writes the shared state store: it takes `--database-url` (env DATABASE_URL). */
  stateStore?: boolean;
}

const CELL_HELP =
  'the cell this machine is (env DRIVING_CELL): registered at its first start; its jobs take only the drivers given to it (needs DATABASE_URL)';

const DATABASE_URL_HELP =
  "PostgreSQL URL of the shared state store (env DATABASE_URL; default the data folder's SQLite file)";

/**
 * The command line every job shares (docs/jobs.md): its name and usage, `--data-dir`, `--json` and
 * `--help` (global, so a sub-command's help shows them too), unknown flags refused, and a usage
 * error said in one line with exit 2. A job adds its own flags and parses.
 *
 * @example const argv = jobArgs('score', 'score [--date D]').option('date', { type: 'string' }).parseSync();
 */
export function jobArgs(
  name: string,
  usage: string,
  options: JobArgsOptions = {},
): Argv<{ 'data-dir': string | undefined; json: boolean }> {
  const commands = options.commands ?? [];
  const names = commands.map((c) => c.command.split(' ')[0] as string);
  let y = yargs(options.argv ?? hideBin(process.argv))
    .scriptName(name)
    .usage(usage)
    .option('data-dir', { type: 'string', global: true, describe: options.dataDirHelp ?? DATA_DIR_HELP })
    .option('json', {
      type: 'boolean',
      default: false,
      global: true,
      describe: options.jsonHelp ?? 'the result as JSON on stdout',
    })
    .version(false)
    .help()
    .strict()
    .fail(usageFailure(name, names));
  if (options.stateStore) {
    // the state store reads DATABASE_URL wherever the job opens it (src/state/open.ts)
    y = y.option('database-url', { type: 'string', global: true, describe: DATABASE_URL_HELP }).middleware((argv) => {
      const url = argv['database-url'];
      if (typeof url === 'string' && url !== '') exportSetting('DATABASE_URL', url);
    }) as typeof y;
    y = y.option('cell', { type: 'string', global: true, describe: CELL_HELP }).middleware((argv) => {
      const cell = argv['cell'];
      if (typeof cell === 'string' && cell !== '') exportSetting('DRIVING_CELL', cell);
      // said as a usage error (exit 2) before any work: a bad name, or a cell without PostgreSQL
      currentCell();
    }) as typeof y;
  }
  for (const c of commands) {
    const forms = c.isDefault ? [c.command, '$0'] : c.command;
    y = y.command(forms, c.describe, (b: Argv) => (c.builder ? c.builder(b) : b), c.handler) as typeof y;
  }
  if (commands.length > 0 && !commands.some((c) => c.isDefault)) y = y.demandCommand(1, 'a command is needed');
  return y;
}
