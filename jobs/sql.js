#!/usr/bin/env node
// Runs a file from sql/ on a Parquet export: the analysts' way to get the warehouse's numbers.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { runSqlOnExport } from '../dist/jobs/sql.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('sql')
  .usage('$0 --parquet DIR --file FILE.sql [--param name=value ...]\n\nRuns a file from sql/ on an export (export.js); rows as CSV on stdout (--json: JSON).\n  $0 --parquet data/exports --file sql/analyst/users.sql      (each app\'s users: the app_id and user_id to pass)\n  $0 --parquet data/exports --file sql/marts/statistics_periods.sql --param app_id=APP --param user_id=USER --param period=week --param start_date=2026-11-01 --param end_date=2026-11-30')
  .option('parquet', { type: 'string', demandOption: true, describe: 'an export folder written by export.js' })
  .option('file', { type: 'string', demandOption: true, describe: 'a .sql file holding one SELECT' })
  .option('param', { type: 'string', array: true, default: [], describe: 'name=value, bound as $name' })
  .option('json', { type: 'boolean', default: false, describe: 'rows as JSON (default: CSV)' })
  .strict()
  .fail(usageFailure('sql'))
  .parseSync();

await runJob('sql', argv.json, async () => {
  const { rows, notes } = await runSqlOnExport({ parquet: argv.parquet, file: argv.file, params: argv.param });
  for (const note of notes) process.stderr.write(`sql: note: ${note}\n`);
  if (!argv.json) {
    const columns = Object.keys(rows[0] ?? {});
    const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
    process.stdout.write(`${columns.join(',')}\n${rows.map((r) => columns.map((c) => cell(r[c])).join(',')).join('\n')}\n`);
  }
  return { result: { rows, notes }, summary: `${rows.length} row(s)${notes.length > 0 ? ` (${notes.length} parameter(s) match nothing: see the note above)` : ''}`, summaryToStderr: true };
});
