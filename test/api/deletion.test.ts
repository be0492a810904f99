// DELETE /v1/org-user/{id} is durable before it is answered, on both state stores: the account's
// mark, its tokens' removal and the request the jobs purge by are one transaction of the shared
// store. A store that refuses the write (here a real trigger in the store failing the insert, as
// a full disk fails it) answers 503 and changes nothing; a retry deletes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { createApi } from '../../src/api/http/server.js';
import { openState } from '../../src/state/open.js';
import { sqliteFileOf } from '../../src/state/db.js';
import { STORES, stateLocations } from '../state/stores.js';

const clock = new Date('2026-11-21T09:00:00Z');

/** A real failure of the store's write: inserts into deletion_requests fail until `heal`. */
async function refuseRequests(where: {
  dataDir: string;
  databaseUrl: string | null;
}): Promise<{ heal(): Promise<void> }> {
  if (where.databaseUrl === null) {
    const db = new Database(sqliteFileOf(where.dataDir));
    db.exec(
      "create trigger refuse before insert on deletion_requests begin select raise(abort, 'database or disk is full'); end",
    );
    return {
      heal: async () => {
        db.exec('drop trigger refuse');
        db.close();
      },
    };
  }
  const client = new pg.Client(where.databaseUrl);
  await client.connect();
  await client.query(
    "create function refuse() returns trigger language plpgsql as $$ begin raise exception 'could not extend file' using errcode = 'disk_full'; end $$",
  );
  await client.query('create trigger refuse before insert on deletion_requests for each row execute function refuse()');
  return {
    heal: async () => {
      await client.query('drop trigger refuse on deletion_requests');
      await client.end();
    },
  };
}

describe.each(STORES)('DELETE /v1/org-user/{id} on the %s store: durable before it is answered', (kind) => {
  const locations = stateLocations(kind);
  let where: { dataDir: string; databaseUrl: string | null };
  let api: Awaited<ReturnType<typeof createApi>>;
  let auth: { authorization: string };
  beforeAll(async () => {
    where = await locations.fresh();
    const { apiKey } = await new AppStore(where).add({ name: 'Fleet', timeZone: 'Europe/Berlin' });
    auth = { authorization: `Bearer ${apiKey}` };
    api = await createApi({ dataDir: where.dataDir, databaseUrl: where.databaseUrl, now: () => clock, pollMs: 50 });
  });
  afterAll(async () => api?.close());

  const requests = async () => (await openState(where)).all('deletion_requests_all');

  it('answers 503 storage_unavailable when the store cannot commit, changes nothing, and a retry deletes', async () => {
    const issued = (
      await api.app.inject({ method: 'POST', url: '/v1/org-user/full-disk/token', headers: auth })
    ).json();
    const fault = await refuseRequests(where);
    const failed = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth });
    expect(failed.statusCode).toBe(503);
    // PostgreSQL's disk_full is a full disk (retry after Retry-After); the trigger's words in SQLite
    // are a failure of the store like any other
    const full = kind === 'postgres';
    expect(failed.json()).toEqual({
      code: full ? 50306 : 50302,
      error: full ? 'storage_full' : 'storage_unavailable',
      message: expect.stringMatching(full ? /nothing was stored or changed/ : /nothing was deleted/),
      requestId: failed.headers['x-request-id'],
    });
    expect(failed.headers['retry-after']).toBe(full ? '30' : undefined);
    expect(failed.body).not.toMatch(/disk is full|could not extend/);
    // the account is unchanged (the mark rolled back with the request): its token still resolves
    expect((await api.app.inject({ method: 'GET', url: `/v1/token/${issued.token}`, headers: auth })).json()).toEqual({
      platformUserId: issued.platformUserId,
      orgUserId: 'full-disk',
    });
    expect(await requests()).toEqual([]);

    await fault.heal();
    const retried = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth });
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toEqual({ code: 0, message: 'success', platformUserId: issued.platformUserId });
    expect((await api.app.inject({ method: 'GET', url: `/v1/token/${issued.token}`, headers: auth })).statusCode).toBe(
      404,
    );
    expect(await requests()).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        app_id: expect.any(String),
        platform_user_id: issued.platformUserId,
        org_user_id: 'full-disk',
        requested_at: clock.toISOString(),
        purged_at: null,
        purged_trips: null,
      },
    ]);
    expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth })).statusCode).toBe(
      404,
    );
    // no request file anywhere: the jobs read the store
    expect(existsSync(pathsFor(where.dataDir).deletionsDir)).toBe(false);
  });

  it('records one request when the same user is deleted by many requests at once: one 200, the rest 404', async () => {
    const issued = (await api.app.inject({ method: 'POST', url: '/v1/org-user/twice/token', headers: auth })).json();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => api.app.inject({ method: 'DELETE', url: '/v1/org-user/twice', headers: auth })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 404, 404, 404]);
    expect((await requests()).filter((r) => r['platform_user_id'] === issued.platformUserId)).toHaveLength(1);
  });
});
