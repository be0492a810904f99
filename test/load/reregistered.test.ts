// An account deleted and made again for the same orgUserId (operation 5 after the DELETE) is a new
// account with its own platformUserId: the purge of the old one, when it meets the new account's
// first trip in one load, acts on the deleted account only (docs/decisions.md, Deletion). The new
// trip is served, announced (trip.created) and kept with its points.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { filesUnder } from '../helpers/files.js';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;
const clock = new Date('2026-11-21T09:00:00Z');

const auth = () => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
});
afterAll(async () => {
  await api?.close();
  ws?.cleanup();
});

/** Every event line of events/pending, parsed. */
function pendingEvents(): { type: string; data: Record<string, unknown> }[] {
  const dir = join(ws.dir, 'events', 'pending');
  return readdirSync(dir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort()
    .flatMap((n) =>
      readFileSync(join(dir, n), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> }),
    );
}

describe('an account made again for a deleted orgUserId', () => {
  it('keeps and announces its first trip when the old account is purged in the same load', async () => {
    const first = (
      await api.app.inject({ method: 'POST', url: '/v1/org-user/comeback/token', headers: auth() })
    ).json();
    const old = [
      tripRecord({
        appId: ws.appId,
        tripId: 'comeback-old',
        userId: first.platformUserId,
        orgUserId: 'comeback',
        start: '2026-11-10T08:00:00+01:00',
        seconds: 600,
      }),
    ];
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'old.ndjson'), old)], now: clock });
    expect(
      pendingEvents()
        .filter((e) => e.type === 'trip.created')
        .map((e) => e.data['tripId']),
    ).toEqual(['comeback-old']);

    expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/comeback', headers: auth() })).statusCode).toBe(
      200,
    );
    const again = (
      await api.app.inject({ method: 'POST', url: '/v1/org-user/comeback/token', headers: auth() })
    ).json();
    expect(again.platformUserId).not.toBe(first.platformUserId);
    // a partner file of the same load: a rejected record of each account (quarantined with its line)
    const partner = [
      tripRecord({
        appId: ws.appId,
        tripId: 'comeback-old-bad',
        userId: first.platformUserId,
        orgUserId: 'comeback',
        start: '2026-11-11T08:00:00+01:00',
        seconds: 600,
        extra: { os: 'windows' },
      }),
      tripRecord({
        appId: ws.appId,
        tripId: 'comeback-new-bad',
        userId: again.platformUserId,
        orgUserId: 'comeback',
        start: '2026-11-19T08:00:00+01:00',
        seconds: 600,
        extra: { os: 'windows' },
      }),
    ];
    writeNdjson(join(ws.paths.landingDir, 'partner.ndjson'), partner);
    const upload = await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: `Bearer ${again.token}` },
      payload: [
        tripRecord({ appId: ws.appId, tripId: 'comeback-new', start: '2026-11-20T08:00:00+01:00', seconds: 600 }),
      ],
    });
    expect(upload.statusCode).toBe(202);

    // the purge of the old account and the new account's trip meet in this load
    const loaded = await runLoad({ dataDir: ws.dir, now: clock });
    expect(loaded.purged).toMatchObject({ users: 1, trips: 1 });
    expect(
      await warehouseRows(ws.paths, "select trip_id, user_id, org_user_id from trips where org_user_id = 'comeback'"),
    ).toEqual([{ trip_id: 'comeback-new', user_id: String(again.platformUserId), org_user_id: 'comeback' }]);

    const events = pendingEvents();
    // the deleted account's undelivered trip.created is dropped; the new account's is written
    expect(events.filter((e) => e.type === 'trip.created').map((e) => [e.data['tripId'], e.data['userId']])).toEqual([
      ['comeback-new', again.platformUserId],
    ]);
    expect(events.filter((e) => e.type === 'user.deleted').map((e) => e.data)).toEqual([
      expect.objectContaining({ orgUserId: 'comeback', userId: first.platformUserId }),
    ]);

    // the new account's quarantined line, points and archived record stay; the deleted account's go
    expect(
      (await warehouseRows(ws.paths, "select trip_id from quarantine where raw like '%comeback-%' order by 1")).map(
        (r) => r['trip_id'],
      ),
    ).toEqual(['comeback-new-bad']);
    const points = await warehouseRows(
      ws.paths,
      `select distinct trip_id from read_parquet('${join(ws.paths.pointsDir, '**', '*.parquet')}') where trip_id like 'comeback-%'`,
    );
    expect(points.map((r) => r['trip_id'])).toEqual(['comeback-new']);
    const archived = filesUnder(join(ws.paths.landingDir, 'loaded'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    expect(archived).toContain('comeback-new-bad');
    expect(archived).toContain(`"platformUserId":${again.platformUserId}`);
    expect(archived).not.toContain('comeback-old');

    await api.ctx.snapshots.refresh();
    const trips = await api.app.inject({ method: 'GET', url: '/v1/org-user/comeback/trips', headers: auth() });
    expect(trips.json().trips.map((t: { tripId: string }) => t.tripId)).toEqual(['comeback-new']);
  });
});
