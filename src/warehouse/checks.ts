import type { DuckDBConnection } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { query, SQL_DIR, sqlText, sqlWith } from '../db/sql.js';

export interface CheckFailure {
  check: string;
  rows: Record<string, unknown>[];
}

/** The invariants in sql/checks: each is a query that must return no rows. */
export function checkNames(): string[] {
  return readdirSync(join(SQL_DIR, 'checks'))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => `checks/${f.slice(0, -4)}`)
    .sort();
}

/**
 * The tables a check looks at the changes of (its `-- changes:` line): it reads only their rows
 * written after `since`, so with none it has nothing to find.
 */
export function checkedTables(name: string): string[] {
  const line = /^-- changes: (.+)$/m.exec(sqlText(name));
  if (!line) throw new Error(`${name}.sql names no tables in a '-- changes:' line`);
  return (line[1] as string).split(',').map((t) => t.trim());
}

/**
 * Runs every check against the connection's current database. `since` limits each check to rows
 * written after that version (0 = everything), so a publish checks what it changes; given
 * `changed` (the tables with rows written since), a check of none of them is skipped.
 */
export async function runChecks(conn: DuckDBConnection, since: number, changed?: Set<string>): Promise<CheckFailure[]> {
  const failures: CheckFailure[] = [];
  for (const name of checkNames()) {
    if (since > 0 && changed && !checkedTables(name).some((t) => changed.has(t))) continue;
    const rows = await query(conn, sqlWith('ops/publish/check_sample', { check: sqlText(name) }), { since });
    if (rows.length > 0) failures.push({ check: name, rows });
  }
  return failures;
}

export class CheckFailedError extends Error {
  constructor(readonly failures: CheckFailure[]) {
    super(`checks failed: ${failures.map((f) => `${f.check} (e.g. ${JSON.stringify(f.rows[0])})`).join('; ')}`);
    this.name = 'CheckFailedError';
  }
}
