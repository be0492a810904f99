import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pathsFor } from '../../src/data-folder.js';
import { openDatabase } from '../../src/db/open.js';
import { run, runScript } from '../../src/db/sql.js';
import { AppStore } from '../../src/apps/store.js';
import { PassportStore } from '../../src/passport/store.js';
import { hashSecret } from '../../src/secrets.js';
import { STORES, openInProcess, stateLocations } from './stores.js';

const T0 = new Date('2026-11-25T10:00:00.000Z');

/**
 * A data folder as the release before the shared store leaves it: apps.json written as its
 * AppStore wrote it, passport/passport.duckdb with its schema (sql/ops/passport/schema.sql).
 */
async function earlierReleaseFolder(
  dataDir: string,
): Promise<{ token: string; deletedToken: string; keeperId: number; apiKey: string }> {
  const paths = pathsFor(dataDir);
  const apiKey = 'dk_earlier-release-key';
  const app = {
    appId: 'app_0011223344556677',
    name: 'Old Fleet',
    timeZone: 'Europe/Berlin',
    createdAt: '2026-10-01T08:00:00.000Z',
    apiKeys: [{ hash: hashSecret(apiKey), createdAt: '2026-10-01T08:00:00.000Z' }],
    appSecret: 'ds_old-secret',
    webhookUrl: null,
  };
  writeFileSync(paths.appsFile, `${JSON.stringify({ version: 1, apps: [app] }, null, 2)}\n`);
  mkdirSync(pathsFor(dataDir).passportFile.replace(/\/[^/]+$/, ''), { recursive: true });
  const db = await openDatabase(paths.passportFile);
  await runScript(db.connection, 'ops/passport/schema');
  await run(
    db.connection,
    "insert into accounts values (101, $app, 'keeper', '2026-10-02T00:00:00Z', null), (102, $app, 'leaver', '2026-10-02T00:00:00Z', '2026-10-20T00:00:00Z')",
    { app: app.appId },
  );
  const token = 'pt_earlier-release-token';
  const deletedToken = 'pt_token-of-deleted-account';
  await run(db.connection, 'insert into tokens values ($h1, $app, 101, $at, $until), ($h2, $app, 102, $at, $until)', {
    h1: hashSecret(token),
    h2: hashSecret(deletedToken),
    app: app.appId,
    at: '2026-11-24T00:00:00Z',
    until: '2026-12-01T00:00:00Z',
  });
  db.close();
  return { token, deletedToken, keeperId: 101, apiKey };
}

describe.each(STORES)('a data folder of the earlier release, on the %s store', (kind) => {
  const locations = stateLocations(kind);

  it('migrates once when two processes start on it together, and says so', async () => {
    const where = await locations.fresh();
    const old = await earlierReleaseFolder(where.dataDir);
    const logs = await Promise.all([
      openInProcess(where.dataDir, where.databaseUrl),
      openInProcess(where.dataDir, where.databaseUrl),
    ]);
    const said = logs
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('state: migrated'));
    expect(said).toEqual([expect.stringContaining('state: migrated 1 apps, 2 accounts and 2 tokens')]);
    const paths = pathsFor(where.dataDir);
    expect(existsSync(paths.passportFile)).toBe(false);
    expect(existsSync(paths.appsFile)).toBe(false);
    expect(existsSync(`${paths.appsFile}.migrated`)).toBe(true);
    const apps = await new AppStore(where).list();
    expect(apps.map((a) => [a.appId, a.name, a.apiKeys[0]?.hash])).toEqual([
      ['app_0011223344556677', 'Old Fleet', hashSecret(old.apiKey)],
    ]);
    const passport = await PassportStore.open(where);
    expect(await passport.tokenOwner(old.token, T0)).toEqual({
      appId: 'app_0011223344556677',
      platformUserId: old.keeperId,
      orgUserId: 'keeper',
    });
    expect(await passport.tokenOwner(old.deletedToken, T0)).toBeNull();
    expect(await passport.isDeleted('app_0011223344556677', 102)).toBe(true);
    expect(await passport.activeAccount('app_0011223344556677', 'keeper')).toBe(101);
    // a token issued now works beside the migrated one
    const fresh = await passport.issueToken('app_0011223344556677', 'keeper', T0, 86_400_000);
    expect(fresh.platformUserId).toBe(101);
  });
});
