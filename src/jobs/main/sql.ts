// `node jobs/sql.js`: runs a file from sql/ on a Parquet export: the analysts' way to get the
// warehouse's numbers.
import { runJob } from '../cli.js';
import { jobArgs } from '../args.js';
import { resolveDataDir } from '../../data-folder.js';

/** Parses sql.js's flags, runs the file and writes its rows as CSV (or JSON). */
export async function main(): Promise<void> {
  const argv = jobArgs(
    'sql',
    "$0 --file FILE.sql [--parquet DIR ...] [--param name=value ...]\n\nRuns a file from sql/ on an export (export.js; default: the data folder's, <data-dir>/exports); rows as CSV on stdout (--json: JSON).\n  $0 --file sql/analyses/users.sql      (each app's users: the app_id and user_id to pass)\n  $0 --file sql/models/marts/statistics_periods.sql --param app_id=APP --param user_id=USER --param period=week --param start_date=2026-11-01 --param end_date=2026-11-30\n  $0 --parquet /tmp/export --file sql/analyses/users.sql      (an export written elsewhere with export.js --out)\n  $0 --parquet /tmp/cells --file sql/analyses/users.sql      (cells' exports, export.js --cell, copied into one folder: read as one)",
    { jsonHelp: 'rows as JSON (default: CSV)' },
  )
    .option('parquet', {
      type: 'string',
      array: true,
      describe:
        "an export folder written by export.js (default: <data-dir>/exports, where export.js writes by default); cells' exports (export.js --cell) read as one: a folder holding them, or the flag repeated",
    })
    .option('file', { type: 'string', demandOption: true, describe: 'a .sql file holding one SELECT' })
    .option('param', { type: 'string', array: true, default: [] as string[], describe: 'name=value, bound as $name' })
    .parseSync();

  // The code that does the work (and DuckDB) is imported once the arguments are parsed: --help and a
  // refused flag cost a Node start only.
  const { runSqlOnExport } = await import('../sql.js');

  await runJob('sql', argv.json, async () => {
    const { rows, notes } = await runSqlOnExport({
      parquet: argv.parquet,
      dataDir: resolveDataDir(argv.dataDir),
      file: argv.file,
      params: argv.param,
    });
    for (const note of notes) process.stderr.write(`sql: note: ${note}\n`);
    if (!argv.json) {
      const columns = Object.keys(rows[0] ?? {});
      const cell = (v: unknown): string =>
        v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      process.stdout.write(
        `${columns.join(',')}\n${rows.map((r) => columns.map((c) => cell(r[c])).join(',')).join('\n')}\n`,
      );
    }
    return {
      result: { rows, notes },
      summary: `${rows.length} row(s)${notes.length > 0 ? ` (${notes.length} parameter(s) match nothing: see the note above)` : ''}`,
      summaryToStderr: true,
    };
  });
}
