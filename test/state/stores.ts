import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import type { StateLocation } from '../../src/state/db.js';
import { closeStates } from '../../src/state/open.js';

/** The two state stores every shared-state test runs against. */
export const STORES = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORES)[number];

/**
 * Gives a describe block fresh state locations of `kind`: a temp data folder, and for PostgreSQL a
 * new database on a server of the block's own (started in beforeAll, stopped in afterAll).
 */
export function stateLocations(kind: StoreKind): { fresh(): Promise<StateLocation & { databaseUrl: string | null }> } {
  let server: PgServer | null = null;
  const dirs: string[] = [];
  beforeAll(async () => {
    if (kind === 'postgres') server = await startPostgres();
  });
  afterAll(async () => {
    await closeStates();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async fresh() {
      const dataDir = mkdtempSync(join(tmpdir(), 'dds-state-'));
      dirs.push(dataDir);
      return { dataDir, databaseUrl: server ? await server.database() : null };
    },
  };
}
