// Backup and restore of the PostgreSQL state store (pg_dump, pg_restore) with real processes
// against a server of the test's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runJobProcess } from '../helpers/job-process.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { AppStore } from '../../src/apps/store.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates } from '../../src/state/open.js';
import { openOutbox } from '../../src/webhooks/open-outbox.js';

const T0 = new Date('2026-11-25T10:00:00.000Z');
const TMP = mkdtempSync(join(tmpdir(), 'dds-backup-pg-'));
let server: PgServer;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await closeStates();
  await server?.stop();
  rmSync(TMP, { recursive: true, force: true });
});

describe('the PostgreSQL state store', () => {
  it('is dumped by backup.js and restored by restore.js into an empty database, apps, keys and tokens alike', async () => {
    const url = await server.database();
    const data = join(TMP, 'data');
    // the API processes' machine: a data folder without state/ (the store is PostgreSQL)
    mkdirSync(data);
    const added = await runJobProcess('apps', ['add', '--name', 'PG Fleet', '--data-dir', data, '--json'], {
      DATABASE_URL: url,
    });
    expect(added.code, added.stderr).toBe(0);
    const { appId } = JSON.parse(added.stdout) as { appId: string };
    const passport = await PassportStore.open({ dataDir: data, databaseUrl: url });
    const { token, platformUserId } = await passport.issueToken(appId, 'driver-7', T0, 86_400_000);
    // the webhook outbox is in the same database; a DuckDB outbox left in the folder from before is not it
    const outbox = await openOutbox(data, { databaseUrl: url });
    const body = JSON.stringify({ id: 'evt_pg', type: 'trip.created', createdAt: T0.toISOString(), appId, data: {} });
    await outbox.intake(
      'v1.ndjson',
      [{ lineNo: 1, eventId: 'evt_pg', appId, eventType: 'trip.created', body, createdAt: T0.toISOString() }],
      [],
      T0,
    );
    await outbox.close();
    await (await openOutbox(data, { databaseUrl: null })).close();

    const backupDir = join(TMP, 'backup');
    const backup = await runJobProcess('backup', ['--to', backupDir, '--data-dir', data, '--database-url', url]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/postgres state store/);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
      state: { dialect: string; where: string; version: string };
      outbox: { copied: string; duckdb: string | null };
      files: { path: string }[];
    };
    expect(manifest.outbox).toEqual({ copied: 'in the state dump', duckdb: null });
    expect(manifest.files.map((f) => f.path)).not.toContain('webhooks/outbox.duckdb');
    expect(manifest.state.dialect).toBe('postgres');
    expect(manifest.state.version).toMatch(/^pg_dump \(PostgreSQL\) \d+/);
    expect(manifest.files.map((f) => f.path)).toContain('state/state.pgdump');

    // a SQLite restore of a PostgreSQL backup is refused, as is a database that holds tables
    const noUrl = await runJobProcess('restore', ['--from', backupDir, '--data-dir', join(TMP, 'nowhere')], {
      DATABASE_URL: '',
    });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/--database-url is needed/);
    const full = await runJobProcess('restore', [
      '--from',
      backupDir,
      '--data-dir',
      join(TMP, 'nowhere'),
      '--database-url',
      url,
    ]);
    expect(full.code).toBe(2);
    expect(full.stderr).toMatch(/holds \d+ table\(s\) already/);

    const target = await server.database();
    const restoredDir = join(TMP, 'restored');
    const restore = await runJobProcess('restore', [
      '--from',
      backupDir,
      '--data-dir',
      restoredDir,
      '--database-url',
      target,
    ]);
    expect(restore.code, restore.stderr).toBe(0);
    const where = { dataDir: restoredDir, databaseUrl: target };
    expect(await new AppStore(where).list()).toEqual(await new AppStore({ dataDir: data, databaseUrl: url }).list());
    expect(await (await PassportStore.open(where)).tokenOwner(token, T0)).toEqual({
      appId,
      platformUserId,
      orgUserId: 'driver-7',
    });
    // the restored store's leases are forgotten: the deliverer of the new machine starts at once
    const client = new pg.Client(target);
    await client.connect();
    expect((await client.query('select count(*)::int as n from leases')).rows[0].n).toBe(0);
    // the outbox came back with the dump
    expect((await client.query('select event_id, status from webhooks.events')).rows).toEqual([
      { event_id: 'evt_pg', status: 'pending' },
    ]);
    await client.end();
  });
});
