#!/usr/bin/env node
// Runs a file from sql/ on a Parquet export: the analysts' way to get the warehouse's numbers.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { runSqlOnExport } from '../dist/jobs/sql.js';

const argv = yargs(hideBin(process.argv))
  .scriptName('sql')
  .usage('$0 --parquet DIR --file sql/marts/safety_scores.sql --param as_of=2026-11-20 --param evaluated_at=2026-11-20T03:00:00Z')
  .option('parquet', { type: 'string', demandOption: true, describe: 'an export folder written by export.js' })
  .option('file', { type: 'string', demandOption: true, describe: 'a .sql file holding one SELECT' })
  .option('param', { type: 'string', array: true, default: [], describe: 'name=value, bound as $name' })
  .option('json', { type: 'boolean', default: false, describe: 'rows as JSON (default: CSV)' })
  .strict()
  .fail(usageFailure('sql'))
  .parseSync();

await runJob('sql', argv.json, async () => {
  const rows = await runSqlOnExport({ parquet: argv.parquet, file: argv.file, params: argv.param });
  if (!argv.json) {
    const columns = Object.keys(rows[0] ?? {});
    const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
    process.stdout.write(`${columns.join(',')}\n${rows.map((r) => columns.map((c) => cell(r[c])).join(',')).join('\n')}\n`);
  }
  return { result: { rows }, summary: `${rows.length} row(s)` };
});
