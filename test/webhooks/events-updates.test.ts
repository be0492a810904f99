// trip.updated (a re-sent trip changed what the API serves) and user.deleted (after the purge):
// written by the jobs after the publish, then delivered by the real deliverer process to a real
// receiver that verifies the signature.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { verifyWebhook } from '../../src/webhooks/signature.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';
import { appSecret, setWebhook } from '../webhooks/setup.js';

const ROOT = join(import.meta.dirname, '..', '..');
let ws: Workspace;
let receiver: Receiver | undefined;
let deliverer: ChildProcess | undefined;
let fileNo = 0;
const now = new Date('2026-11-21T12:00:00Z');

beforeEach(async () => {
  ws = await workspace('America/New_York');
});
afterEach(async () => {
  if (deliverer && deliverer.exitCode === null) deliverer.kill('SIGKILL');
  await receiver?.close();
  receiver = undefined;
  ws.cleanup();
});
afterAll(removeBuiltFolders);

type Ev = { id: string; type: string; appId: string; createdAt: string; data: Record<string, unknown> };
/** The events of every file the jobs wrote, and takes them away (as the deliverer would). */
function takeEvents(): Ev[] {
  if (!existsSync(ws.paths.eventsDir)) return [];
  const files = readdirSync(ws.paths.eventsDir).sort();
  const events = files.flatMap((f) =>
    readFileSync(join(ws.paths.eventsDir, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Ev),
  );
  for (const f of files) rmSync(join(ws.paths.eventsDir, f));
  return events;
}

const trip = (id: string, extra: Partial<Parameters<typeof tripRecord>[0]> = {}) =>
  tripRecord({
    appId: ws.appId,
    tripId: id,
    userId: 1,
    orgUserId: 'd-1',
    start: '2026-11-20T08:00:00-05:00',
    seconds: 600,
    ...extra,
  });

/** Loads records from a new file (a file's bytes identify it: the same bytes twice load once). */
const load = (records: unknown[], at = now) =>
  runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', `${++fileNo}.ndjson`), records)], now: at });

/** Makes this test's folder a copy of one where trips a and b were loaded, their events still pending (built once). */
async function tripsAB(): Promise<void> {
  ws.cleanup();
  ({ ws } = await builtFolder('events-updates/a-b', 'America/New_York', async (w) => {
    ws = w;
    await load([trip('a'), trip('b')]);
  }));
}

const types = (events: Ev[]) => events.map((e) => `${e.type} ${String(e.data['tripId'] ?? e.data['orgUserId'])}`);

describe('trip.updated', () => {
  it('is not written for a re-sent trip that serves the same, nor for a change the API does not serve', async () => {
    await tripsAB();
    expect(types(takeEvents())).toEqual(['trip.created a', 'trip.created b']);
    // the same trip again beside a new one: only the new one is news
    await load([trip('a'), trip('c', { start: '2026-11-20T10:00:00-05:00' })]);
    expect(types(takeEvents())).toEqual(['trip.created c']);
    // a field the service neither keeps nor serves (a point's heading)
    const withHeading = trip('a');
    (withHeading['points'] as Record<string, unknown>[]).forEach((p) => (p['heading'] = 90));
    await load([withHeading]);
    expect(takeEvents()).toEqual([]);
  });

  it('is written once for each change of what the API serves, with a new id each time, also when values change back', async () => {
    await tripsAB();
    takeEvents();
    const changes: [string, Record<string, unknown>][] = [
      ['an event', trip('a', { events: [{ type: 'brake', from: 100, to: 103 }] })],
      ['back as it was', trip('a')],
      ['the device', { ...trip('a'), deviceId: 'phone-2' }],
      ['the start time', trip('a', { start: '2026-11-20T08:00:05-05:00' })],
      ['the points (speed)', trip('a', { start: '2026-11-20T08:00:05-05:00', speed: () => 14 })],
    ];
    const ids = new Set<string>();
    for (const [what, record] of changes) {
      await load([record]);
      const events = takeEvents();
      expect(types(events), what).toEqual(['trip.updated a']);
      const e = events[0]!;
      expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
      expect(ids.has(e.id), what).toBe(false);
      ids.add(e.id);
      expect(e).toMatchObject({
        appId: ws.appId,
        data: { appId: ws.appId, orgUserId: 'd-1', userId: 1, tripId: 'a', status: 'normal' },
      });
      // the data is what the API now serves
      expect(e.data['startTime']).toBe(
        record === changes[3]![1] || record === changes[4]![1] ? '2026-11-20 08:00:05' : '2026-11-20 08:00:00',
      );
    }
    // and the same record again is no news
    await load([changes[4]![1], trip('z', { start: '2026-11-20T11:00:00-05:00' })]);
    expect(types(takeEvents())).toEqual(['trip.created z']);
  });

  it('repeats the same ids when the job died after writing the events file', async () => {
    await load([trip('a')]);
    takeEvents();
    await load([trip('a', { events: [{ type: 'brake', from: 100, to: 103 }] })]);
    const first = takeEvents();
    // forget what was recorded, as if the job had died between the file and the record
    const { openDatabase } = await import('../../src/db/open.js');
    const { run } = await import('../../src/db/sql.js');
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(
      db.connection,
      "update announced_trips set fingerprint = 'before', generation = 0, announced_version = 1 where trip_id = 'a'",
    );
    db.close();
    const { emitEvents } = await import('../../src/events/emit.js');
    const { openWarehouse } = await import('../../src/warehouse/warehouse.js');
    const { AppStore: Store } = await import('../../src/apps/store.js');
    const wh = await openWarehouse(ws.paths.warehouseFile, await new Store(ws.paths.appsFile).list());
    try {
      const { warehouseVersion } = await import('../../src/warehouse/warehouse.js');
      await emitEvents(wh, ws.paths.eventsDir, await warehouseVersion(wh.conn), now);
    } finally {
      wh.close();
    }
    expect(takeEvents().map((e) => e.id)).toEqual(first.map((e) => e.id));
  });
});

describe('user.deleted', () => {
  it('is written once after the purge, with orgUserId, userId and deletedAt only, and delivered signed to a real receiver', async () => {
    const store = new AppStore(ws.paths.appsFile);
    const key = (await store.rotateKey(ws.appId)).apiKey;
    const passport = await PassportStore.open(ws.paths.passportFile);
    const ids = await passport.ensureAccounts(ws.appId, ['leaver', 'keeper']);
    passport.close();
    const leaver = ids.get('leaver') as number;
    const keeper = ids.get('keeper') as number;
    await load([
      trip('l1', { userId: leaver, orgUserId: 'leaver' }),
      trip('k1', { userId: keeper, orgUserId: 'keeper', start: '2026-11-20T09:00:00-05:00' }),
    ]);
    takeEvents();
    const deletedAt = new Date('2026-11-21T13:30:00Z');
    const api = await createApi({ dataDir: ws.dir, now: () => deletedAt, pollMs: 50 });
    try {
      const res = await api.app.inject({
        method: 'DELETE',
        url: '/v1/org-user/leaver',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await api.close();
    }
    // and a re-sent trip of the keeper that changed, in the same run
    await runLoad({
      dataDir: ws.dir,
      inputs: [
        writeNdjson(join(ws.dir, 'in', 'resent.ndjson'), [
          trip('k1', { userId: keeper, orgUserId: 'keeper', start: '2026-11-20T09:00:00-05:00', seconds: 700 }),
        ]),
      ],
      now: new Date('2026-11-21T14:00:00Z'),
    });
    const events = takeEvents();
    expect(types(events).sort()).toEqual(['trip.updated k1', 'user.deleted leaver']);
    const deleted = events.find((e) => e.type === 'user.deleted')!;
    expect(deleted.data).toEqual({ orgUserId: 'leaver', userId: leaver, deletedAt: '2026-11-21T13:30:00.000Z' });
    expect(deleted.appId).toBe(ws.appId);
    expect(deleted.id).toMatch(/^evt_[0-9a-f]{32}$/);

    // a later run announces nobody again
    await load([trip('k2', { userId: keeper, orgUserId: 'keeper', start: '2026-11-20T11:00:00-05:00' })]);
    expect(types(takeEvents())).toEqual(['trip.created k2']);

    // the deliverer sends both kinds with the envelope and signature of the others
    receiver = await startReceiver();
    await setWebhook(ws, receiver.url);
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(ws.paths.eventsDir, { recursive: true });
    writeFileSync(
      join(ws.paths.eventsDir, 'v000000000099.ndjson'),
      `${events.map((e) => JSON.stringify(e)).join('\n')}\n`,
    );
    deliverer = spawn(process.execPath, ['jobs/deliver.js', '--data-dir', ws.dir], {
      cwd: ROOT,
      env: {
        ...process.env,
        DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
        DRIVING_WEBHOOK_POLL: '50ms',
        DRIVING_WEBHOOK_TIMEOUT: '2s',
      },
    });
    await receiver.waitFor(2, 30_000);
    const secret = await appSecret(ws);
    const got = receiver.received.map((r) => {
      expect(verifyWebhook(r.rawBody, r.headers['authorization'], secret)).toBe(true);
      const body = JSON.parse(r.rawBody.toString('utf8')) as Ev;
      expect(r.headers['x-event-type']).toBe(body.type);
      expect(r.headers['x-event-id']).toBe(body.id);
      return body;
    });
    expect(got.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(got.find((e) => e.type === 'user.deleted')).toEqual(deleted);
  });
});
