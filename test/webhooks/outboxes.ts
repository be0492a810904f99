import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { openOutbox } from '../../src/webhooks/open-outbox.js';
import type { OutboxStore } from '../../src/webhooks/outbox-store.js';

/** The two outboxes every outbox contract test runs against: the DuckDB file and PostgreSQL. */
export const OUTBOXES = ['duckdb', 'postgres'] as const;
export type OutboxKind = (typeof OUTBOXES)[number];

/**
 * Gives a describe block a fresh outbox of `kind` per call: a DuckDB file in a temp data folder,
 * or a new database on a PostgreSQL server of the block's own. Every outbox is closed after its test.
 */
export function outboxes(kind: OutboxKind): { fresh(): Promise<OutboxStore> } {
  let server: PgServer | null = null;
  const open: OutboxStore[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    if (kind === 'postgres') server = await startPostgres();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });
  afterAll(async () => {
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async fresh() {
      const dataDir = mkdtempSync(join(tmpdir(), 'dds-outbox-'));
      dirs.push(dataDir);
      const outbox = await openOutbox(dataDir, { databaseUrl: server ? await server.database() : null });
      open.push(outbox);
      return outbox;
    },
  };
}
