import type { DuckDBConnection } from '@duckdb/node-api';
import { runScript } from './sql.js';

/** The SQL macros every model relies on: helpers, then the versioned scoring models. */
export const MACRO_FILES = ['macros', 'models/trip_score', 'models/energy', 'models/safety_score'] as const;

export async function installMacros(conn: DuckDBConnection): Promise<void> {
  for (const file of MACRO_FILES) await runScript(conn, file);
}
