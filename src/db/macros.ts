import type { DuckDBConnection } from '@duckdb/node-api';
import { run, splitStatements, sqlText } from './sql.js';

/** The SQL macros every model relies on: helpers, then the versioned scoring models. */
export const MACRO_FILES = [
  'macros/common',
  'models/scoring/trip_score',
  'models/scoring/energy',
  'models/scoring/safety_score',
] as const;

let script: string | undefined;

/**
 * Installs every macro in one call to DuckDB: statement by statement they were about 30 calls,
 * each with its own fixed cost, paid by every job and connection that opens.
 */
export async function installMacros(conn: DuckDBConnection): Promise<void> {
  script ??= MACRO_FILES.flatMap((file) => splitStatements(sqlText(file))).join(';\n');
  await run(conn, script);
}
