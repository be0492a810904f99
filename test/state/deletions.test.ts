// Deletion requests live in the shared state store, for both stores: a DELETE answered by an API
// process (PostgreSQL: on a machine with a data folder of its own) is purged by purge.js on the
// job machine's folder, with nothing written under requests/deletions anywhere; the request is
// marked purged in the store with the user's trips removed. And a data folder of the earlier
// release, whose requests are files, is taken into the store by itself, once, when two processes
// start on it together. A purged request keeps no byte of the org user id in SQLite's files.
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates, openState } from '../../src/state/open.js';
import { PENDING_GRACE_MS } from '../../src/state/migrate-deletions.js';
import { markPurged, pendingDeletions, recordDeletion } from '../../src/state/deletions.js';
import { eraseAccounts } from '../../src/state/erase.js';
import { sqliteFileOf } from '../../src/state/db.js';
import { runJobProcess } from '../helpers/job-process.js';
import { runLoad } from '../../src/jobs/load.js';
import { tripRecord } from '../helpers/trips.js';
import { publishedRows } from '../helpers/workspace.js';
import { STORES, openInProcess, serveProcesses, stateLocations } from './stores.js';

/** Every row of deletion_requests, as the store holds it. */
/** Runs `work` with this process's stderr captured: a warning a test expects, asserted rather than printed. */
async function withStderr<T>(work: () => Promise<T>): Promise<{ result: T; stderr: string }> {
  const write = process.stderr.write.bind(process.stderr);
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { result: await work(), stderr };
  } finally {
    process.stderr.write = write;
  }
}

async function requestRows(where: { dataDir: string; databaseUrl: string | null }): Promise<Record<string, unknown>[]> {
  return (await openState(where)).all('deletion_requests_all');
}

describe.each(STORES)('deletion requests in the %s store', (kind) => {
  const locations = stateLocations(kind);
  const machines = serveProcesses();

  it("a DELETE answered by one API process is purged by purge.js on the job's folder; nothing under requests/deletions is written or read", async () => {
    const where = await locations.fresh();
    const { appId, apiKey } = await new AppStore(where).add({ name: 'Fleet', timeZone: 'UTC' });
    const env = { DATABASE_URL: where.databaseUrl ?? '' };
    // PostgreSQL: the API on another machine, a data folder of its own; SQLite: the machine's one folder
    const api = await machines.start(where, true);
    const apiDir = api.dataDir;
    const call = (path: string, method = 'GET') =>
      fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${apiKey}` } });
    const ids: Record<string, number> = {};
    for (const org of ['leaver', 'keeper'])
      ids[org] = (
        (await (await call(`/v1/org-user/${org}/token`, 'POST')).json()) as { platformUserId: number }
      ).platformUserId;

    // the job machine's folder: two trips of the leaver, one of the keeper, loaded and published
    const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const trips = [
      ['leaver-1', 'leaver', 8],
      ['leaver-2', 'leaver', 10],
      ['keeper-1', 'keeper', 9],
    ] as const;
    const input = join(where.dataDir, 'in', 'trips.ndjson');
    mkdirSync(join(input, '..'), { recursive: true });
    writeFileSync(
      input,
      trips
        .map(([tripId, org, hour]) =>
          JSON.stringify(
            tripRecord({
              appId,
              tripId,
              userId: ids[org],
              orgUserId: org,
              start: `${day}T${String(hour).padStart(2, '0')}:00:00Z`,
              seconds: 300,
            }),
          ),
        )
        .join('\n'),
    );
    // loaded by the load's code in this process (its effect is what counts here; purge.js below is
    // the process under test), with the store the job machine's processes get from DATABASE_URL
    const savedUrl = process.env['DATABASE_URL'];
    process.env['DATABASE_URL'] = env.DATABASE_URL;
    try {
      expect((await runLoad({ dataDir: where.dataDir, inputs: [input] })).totals.tripsLoaded).toBe(3);
    } finally {
      if (savedUrl === undefined) delete process.env['DATABASE_URL'];
      else process.env['DATABASE_URL'] = savedUrl;
    }

    expect((await call('/v1/org-user/leaver', 'DELETE')).status).toBe(200);
    for (const dir of [where.dataDir, apiDir]) expect(existsSync(pathsFor(dir).deletionsDir), dir).toBe(false);
    expect(await requestRows(where)).toEqual([
      {
        id: expect.any(String),
        app_id: appId,
        platform_user_id: ids['leaver'],
        org_user_id: 'leaver',
        requested_at: expect.any(String),
        purged_at: null,
        purged_trips: null,
      },
    ]);

    const purged = await runJobProcess('purge', ['--data-dir', where.dataDir, '--json'], env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(JSON.parse(purged.stdout)).toMatchObject({
      ok: true,
      purged: { users: 1, requests: 1, trips: 2 },
      publish: { published: true },
    });
    // progress on stderr names the step
    expect(purged.stderr).toMatch(/purge: purged 1 deleted account\(s\) \(1 request\(s\)\): 2 trips/);
    const [row] = await requestRows(where);
    expect(row).toMatchObject({ platform_user_id: ids['leaver'], org_user_id: null, purged_trips: 2 });
    expect(Date.parse(String(row?.['purged_at']))).toBeGreaterThan(0);
    expect((await publishedRows(pathsFor(where.dataDir), 'trips', 'trip_id')).map((t) => t['trip_id'])).toEqual([
      'keeper-1',
    ]);
    for (const dir of [where.dataDir, apiDir]) expect(existsSync(pathsFor(dir).deletionsDir), dir).toBe(false);
    // its metrics, by the writer every job uses
    const prom = readFileSync(join(where.dataDir, 'metrics', 'driving_job_purge.prom'), 'utf8');
    expect(prom).toContain('driving_job_records{job="purge",outcome="purged"} 2');
    expect(prom).toContain('driving_job_exit_status{job="purge"} 0');

    // nothing pending: the next run purges nothing and publishes nothing
    const again = await runJobProcess('purge', ['--data-dir', where.dataDir], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^purge: no deletion request pending; /);
  }, 300_000);

  it('marks a request purged when the purge acted, never before it was requested, whatever the batch began at', async () => {
    const where = await locations.fresh();
    const { appId } = await new AppStore(where).add({ name: 'Fleet', timeZone: 'UTC' });
    const state = await openState(where);
    const wallBefore = Date.now();
    // one recorded as the batch runs (the batch's time is a minute earlier), one by an API machine
    // whose clock runs an hour ahead
    const during = new Date(wallBefore).toISOString();
    const ahead = new Date(wallBefore + 3_600_000).toISOString();
    await state.transaction(async (tx) => {
      await recordDeletion(tx, { appId, platformUserId: 41, orgUserId: 'during', requestedAt: during });
      await recordDeletion(tx, { appId, platformUserId: 42, orgUserId: 'ahead', requestedAt: ahead });
    });
    const savedUrl = process.env['DATABASE_URL'];
    process.env['DATABASE_URL'] = where.databaseUrl ?? '';
    try {
      await runLoad({ dataDir: where.dataDir, now: new Date(wallBefore - 60_000) });
    } finally {
      if (savedUrl === undefined) delete process.env['DATABASE_URL'];
      else process.env['DATABASE_URL'] = savedUrl;
    }
    const rows = await requestRows(where);
    const purgedAt = (org: number) => String(rows.find((r) => Number(r['platform_user_id']) === org)?.['purged_at']);
    expect(rows.every((r) => r['purged_at'] !== null)).toBe(true);
    // the wall clock as the purge marked it: after the request, not the batch's time
    expect(Date.parse(purgedAt(41))).toBeGreaterThanOrEqual(Date.parse(during));
    expect(Date.parse(purgedAt(41))).toBeLessThanOrEqual(Date.now());
    // a request from ahead of this clock reads as purged the instant it was requested
    expect(purgedAt(42)).toBe(ahead);
    for (const r of rows)
      expect(Date.parse(String(r['purged_at']))).toBeGreaterThanOrEqual(Date.parse(String(r['requested_at'])));
  }, 120_000);

  it("takes an earlier release's request files in by itself, once, when two processes start together, and says so", async () => {
    const where = await locations.fresh();
    const { appId } = await new AppStore(where).add({ name: 'Fleet', timeZone: 'UTC' });
    const passport = await PassportStore.open(where);
    const accounts = await passport.ensureAccounts(
      appId,
      ['confirmed', 'marked-pending', 'dead-pending', 'running-pending'],
      new Date('2026-11-20T00:00:00Z'),
    );
    const id = (org: string) => accounts.get(org) as number;
    // the earlier release marked these two before the process died (or confirmed)
    for (const org of ['confirmed', 'marked-pending'])
      expect(await passport.markDeleted(appId, org, id(org), new Date('2026-11-24T10:00:00Z'))).toBe(true);
    await closeStates();

    const dir = pathsFor(where.dataDir).deletionsDir;
    mkdirSync(dir, { recursive: true });
    const file = (name: string, org: string, at: string) => {
      writeFileSync(
        join(dir, name),
        JSON.stringify({ appId, platformUserId: id(org), orgUserId: org, requestedAt: at }),
      );
      return join(dir, name);
    };
    file('2026-11-24T10-00-00-000Z-aaaa.json', 'confirmed', '2026-11-24T10:00:00.000Z');
    file('2026-11-24T11-00-00-000Z-bbbb.json.pending', 'marked-pending', '2026-11-24T11:00:00.000Z');
    // never marked, and older than a DELETE can be running: discarded, as the earlier release's settle did
    const dead = file('2026-11-24T12-00-00-000Z-cccc.json.pending', 'dead-pending', '2026-11-24T12:00:00.000Z');
    const old = new Date(Date.now() - 2 * PENDING_GRACE_MS);
    utimesSync(dead, old, old);
    // never marked but just written: a DELETE an API process of the earlier release may still be running
    const running = file('2026-11-25T12-00-00-000Z-dddd.json.pending', 'running-pending', new Date().toISOString());
    writeFileSync(join(dir, '2026-11-25T13-00-00-000Z-eeee.json'), '{"appId": ');

    const logs = await Promise.all([
      openInProcess(where.dataDir, where.databaseUrl),
      openInProcess(where.dataDir, where.databaseUrl),
    ]);
    // each request recorded once and the dead one discarded once, by whichever process got there:
    // one line as a rule, two when the second read the files before the first had removed them
    const said = logs
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('state: migrated'))
      .map((l) =>
        /^state: migrated (\d+) deletion request\(s\) from .*requests\/deletions into [^;]*(?:; (\d+) pending request\(s\) of accounts never marked deleted discarded)?$/.exec(
          l,
        ),
      );
    expect(said.length).toBeGreaterThan(0);
    expect(said.every((m) => m !== null)).toBe(true);
    const total = (group: number) => said.reduce((n, m) => n + Number(m?.[group] ?? 0), 0);
    expect([total(1), total(2)]).toEqual([2, 1]);
    // the unreadable file is named by both, and left
    expect(
      logs
        .join('')
        .split('\n')
        .filter((l) => l.includes('eeee.json: not a deletion request')),
    ).toHaveLength(2);
    expect(readdirSync(dir).sort()).toEqual([running.split('/').pop(), '2026-11-25T13-00-00-000Z-eeee.json']);

    // this process's first open of the store names the unreadable file too: expected, so kept off the test's output
    const { result: rows, stderr } = await withStderr(() => requestRows(where));
    expect(stderr).toContain('eeee.json: not a deletion request this release can read');
    expect(
      rows.map((r) => [r['id'], r['platform_user_id'], r['org_user_id'], r['requested_at'], r['purged_at']]),
    ).toEqual([
      ['2026-11-24T10-00-00-000Z-aaaa', id('confirmed'), 'confirmed', '2026-11-24T10:00:00.000Z', null],
      ['2026-11-24T11-00-00-000Z-bbbb', id('marked-pending'), 'marked-pending', '2026-11-24T11:00:00.000Z', null],
    ]);
    // a file put back (a crash between the commit and the removal) is recorded as nothing new
    file('2026-11-24T10-00-00-000Z-aaaa.json', 'confirmed', '2026-11-24T10:00:00.000Z');
    expect(
      (await openInProcess(where.dataDir, where.databaseUrl))
        .split('\n')
        .filter((l) => l.startsWith('state: migrated')),
    ).toEqual([]);
    expect(existsSync(join(dir, '2026-11-24T10-00-00-000Z-aaaa.json'))).toBe(false);
    expect(await requestRows(where)).toHaveLength(2);
  }, 120_000);
});

describe('a purged request in the SQLite store', () => {
  const locations = stateLocations('sqlite');

  it("keeps no byte of the org user id once marked purged: the request row drops it with the account's", async () => {
    const where = await locations.fresh();
    const passport = await PassportStore.open(where);
    const orgUserId = 'leaver-c0ffee42';
    const { platformUserId } = await passport.issueToken(
      'app_a',
      orgUserId,
      new Date('2026-11-24T00:00:00Z'),
      86_400_000,
    );
    const files = () =>
      [sqliteFileOf(where.dataDir), `${sqliteFileOf(where.dataDir)}-wal`].filter((f) => existsSync(f));
    const anywhere = (text: string) => files().some((f) => readFileSync(f).includes(Buffer.from(text)));
    expect(await passport.deleteAccount('app_a', orgUserId, new Date('2026-11-25T00:00:00Z'))).toBe(platformUserId);
    const db = await openState(where);
    const [pending] = await pendingDeletions(db);
    expect(pending).toMatchObject({ appId: 'app_a', platformUserId, orgUserId });
    expect(anywhere(orgUserId)).toBe(true);
    // what the purge does last (src/purge/purge.ts)
    await eraseAccounts(db, [{ appId: 'app_a', platformUserId }], (tx) =>
      markPurged(
        tx,
        [{ id: pending!.id, trips: 3, requestedAt: pending!.requestedAt }],
        new Date('2026-11-25T01:00:00Z'),
      ),
    );
    expect(await pendingDeletions(db)).toEqual([]);
    expect(await db.all('deletion_requests_all')).toEqual([
      {
        id: pending!.id,
        app_id: 'app_a',
        platform_user_id: platformUserId,
        org_user_id: null,
        requested_at: '2026-11-25T00:00:00.000Z',
        purged_at: '2026-11-25T01:00:00.000Z',
        purged_trips: 3,
      },
    ]);
    expect(anywhere(orgUserId)).toBe(false);
  });
});
