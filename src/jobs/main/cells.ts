// `node jobs/cells.js`: the operator's tool for cells (docs/operating.md, Cells): list them, close
// one to new drivers or open it again, and move a driver from this cell to another.
import type { Arguments } from 'yargs';
import { runJob } from '../cli.js';
import { jobArgs, type JobCommand } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';
import { stderrProgress } from '../../progress.js';
import { InputError } from '../../errors.js';

interface CellsArgs {
  dataDir?: string;
  json: boolean;
  name: string;
  orgUser: string;
  app?: string;
  to: string;
}

// The state store (and DuckDB) are imported when a command runs, once yargs has parsed it: --help
// and a refused flag cost a Node start only.
const directory = async (argv: CellsArgs) => {
  const [{ openState }, { CellDirectory }] = await Promise.all([
    import('../../state/open.js'),
    import('../../cells/directory.js'),
  ]);
  const { resolveDatabaseUrl } = await import('../../state/open.js');
  if (!resolveDatabaseUrl())
    throw new InputError('cells live in the shared PostgreSQL state store: set DATABASE_URL (or --database-url)');
  return new CellDirectory(await openState({ dataDir: resolveDataDir(argv.dataDir) }));
};

const handler =
  <T>(name: string, job: (argv: CellsArgs) => Promise<{ result: T; summary: string }>) =>
  (parsed: Arguments): Promise<void> => {
    const argv = parsed as unknown as CellsArgs;
    return runJob(`cells ${name}`, argv.json, () => job(argv));
  };

const setAccepting = (accepting: boolean) =>
  handler(accepting ? 'open' : 'close', async (argv) => {
    const cells = await directory(argv);
    if (!(await cells.setAccepting(argv.name, accepting)))
      throw new InputError(`${argv.name}: no such cell (cells.js list names them)`);
    return {
      result: { name: argv.name, accepting },
      summary: `cell ${argv.name} ${accepting ? 'takes new drivers again' : 'takes no new drivers; its drivers stay'}`,
    };
  });

const commands: JobCommand[] = [
  {
    command: 'list',
    describe: 'list the cells: name, whether it takes new drivers, drivers given to it',
    handler: handler('list', async (argv) => {
      const cells = await (await directory(argv)).list();
      return {
        result: { cells },
        summary: `${cells.length} cell(s)\n${cells.map((c) => `  ${c.name}  ${c.accepting ? 'open' : 'closed'}  drivers=${c.drivers}`).join('\n')}`,
      };
    }),
  },
  {
    command: 'close <name>',
    describe: 'give the cell no new drivers (its drivers stay, and may be moved away)',
    handler: setAccepting(false),
  },
  { command: 'open <name>', describe: 'give the cell new drivers again', handler: setAccepting(true) },
  {
    command: 'move',
    describe:
      'move a driver from this cell (--cell, the machine holding its data) to another: served throughout, erased here after DRIVING_CELL_MOVE_GRACE once the other serves it',
    builder: (y) =>
      y
        .option('org-user', { type: 'string', demandOption: true, describe: "the driver's orgUserId" })
        .option('app', { type: 'string', describe: "the driver's appId (default: the data folder's only app)" })
        .option('to', { type: 'string', demandOption: true, describe: 'the cell the driver moves to' }),
    handler: handler('move', async (argv) => {
      const dataDir = resolveDataDir(argv.dataDir);
      const [{ moveDriver }, { appsOf }] = await Promise.all([import('../../cells/move.js'), import('../data-dir.js')]);
      const moved = await moveDriver({
        dataDir,
        apps: await appsOf(dataDir),
        ...(argv.app ? { appId: argv.app } : {}),
        orgUserId: String(argv.orgUser),
        to: String(argv.to),
        progress: stderrProgress,
      });
      const rows = Object.entries(moved.rows)
        .map(([t, n]) => `${n} ${t}`)
        .join(', ');
      return {
        result: moved,
        summary: `driver ${moved.orgUserId} (${moved.platformUserId}) moving from ${moved.from} to ${moved.to}: package ${moved.moveId} sent (${rows}; ${moved.bytes} bytes)${moved.resumed ? ', sent again' : ''}; ${moved.to}'s next load takes it in`,
      };
    }),
  },
];

/** Parses cells.js's command and flags and runs the command. */
export async function main(): Promise<void> {
  await jobArgs(
    'cells',
    "$0 <command> [options]\n\nThe operator's tool for cells: list them, close one to new drivers or open it again, move a driver from this cell (--cell) to another.",
    { commands, stateStore: true },
  ).parseAsync();
}
