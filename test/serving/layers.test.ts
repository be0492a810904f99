// The serving pack's layers (src/serving/format.ts, layers.ts): a series of loads adds delta
// layers, and publishes merge them (deltas among themselves, keeping a purge mark for the layers
// below, then everything into a new base). After every load the pack answers exactly as the SQL
// path does, over trips sent again at another time, trips that tie in start time with a trip of
// an older layer, and days whose statistics change; and a purged user's rows stay gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createApi } from '../../src/api/http/server.js';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { HeldLayers } from '../../src/publish/held-layers.js';
import { packFiles } from '../../src/publish/write-pack.js';
import { SectionFile } from '../../src/serving/pack.js';
import { manifestOf, publishedRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { oneFile } from '../helpers/one-file.js';

let ws: Workspace;
let packApi: Awaited<ReturnType<typeof createApi>>;
let sqlApi: Awaited<ReturnType<typeof createApi>>;
let key: string;
const clock = new Date('2026-11-02T12:00:00Z');
const ids = new Map<string, number>();
let step = 0;
// as the continuous load does: the served layers stay open from one publish to the next
const held = new HeldLayers();

const trip = (
  orgUserId: string,
  tripId: string,
  start: string,
  seconds = 900,
  events: { type: string; from: number; to: number }[] = [],
) => tripRecord({ appId: ws.appId, tripId, userId: ids.get(orgUserId) as number, orgUserId, start, seconds, events });

async function ask(api: typeof packApi, url: string): Promise<{ status: number; body: unknown }> {
  const res = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  const body = res.json() as Record<string, unknown>;
  delete body['requestId'];
  return { status: res.statusCode, body };
}

async function both(url: string): Promise<{ status: number; body: unknown }> {
  const [fromPack, fromSql] = [await ask(packApi, url), await ask(sqlApi, url)];
  expect(fromPack, url).toEqual(fromSql);
  return fromPack;
}

/** Loads `records`, lets both APIs follow, and compares every answer of every user. */
async function loadAndCompare(records: Record<string, unknown>[]): Promise<string[]> {
  step++;
  await runLoad({
    dataDir: ws.dir,
    inputs: [writeNdjson(join(ws.dir, 'in', `step-${step}.ndjson`), records)],
    now: clock,
    heldLayers: held,
  });
  // what stays open is what the new pack names, no more (a layer merged away or scrubbed is let go)
  const named = packFiles(manifestOf(ws.paths)?.pack).map((name) => join(ws.paths.publishedDir, name));
  for (const path of held.paths()) expect(named).toContain(path);
  await packApi.ctx.snapshots.refresh();
  await sqlApi.ctx.snapshots.refresh();
  expect((await packApi.ctx.snapshots.use(async (s) => s.pack !== null))?.value).toBe(true);
  const trips = await publishedRows(ws.paths, 'trips', 'org_user_id, trip_id');
  const byUser = new Map<string, string[]>();
  for (const t of trips)
    byUser.set(String(t['org_user_id']), [...(byUser.get(String(t['org_user_id'])) ?? []), String(t['trip_id'])]);
  for (const [user, tripIds] of byUser) {
    const u = encodeURIComponent(user);
    for (const limit of [2, 100]) {
      let cursor: string | undefined;
      do {
        const { status, body } = await both(
          `/v1/org-user/${u}/trips?limit=${limit}&startTime=2026-10-01${cursor ? `&nextCursor=${cursor}` : ''}`,
        );
        cursor = status === 200 ? (body as { nextCursor?: string }).nextCursor : undefined;
      } while (cursor);
    }
    for (const id of [...tripIds, 'tie-a', 'tie-b', 'moved', 'no-such-trip'])
      await both(`/v1/org-user/${u}/trip/${encodeURIComponent(id)}`);
    for (const type of ['day', 'week', 'month'])
      await both(`/v1/org-user/${u}/statistics?type=${type}&startTime=2026-10-19&endTime=2026-11-02`);
  }
  return manifestOf(ws.paths)?.pack?.files.trips ?? [];
}

/** What the pack itself holds for a user (the API answers 404 for a purged one before asking it). */
async function packRows(orgUserId: string): Promise<unknown[]> {
  const page = {
    from: new Date(0),
    to: new Date('2100-01-01'),
    afterUs: '9223372036854775807',
    afterTrip: '',
    limit: 1000,
  };
  const scope = { appId: ws.appId, userId: ids.get(orgUserId) as number, zone: 'Europe/Berlin' };
  return (
    (
      await packApi.ctx.snapshots.use(async (s) => [
        ...((await s.pack?.tripPage(scope, page)) ?? []),
        ...((await s.pack?.tripDetail(scope, 'gone-1')) ? ['gone-1 in detail'] : []),
        ...((
          await s.pack?.statistics(scope, 'month', '2026-10-01', '2026-11-30')
        )?.filter((r) => Number(r['count_trips']) > 0) ?? []),
      ])
    )?.value ?? []
  );
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  // 3 users over 5 days: a base that outweighs the small deltas and not the day of 60 trips; every
  // load compares every answer of every user and trip, so the base's size is the test's cost
  await runGenerate({
    dataDir: ws.dir,
    users: 3,
    days: 5,
    seed: 11,
    format: 'ndjson',
    endDate: '2026-10-30',
    out: join(ws.dir, 'gen'),
  });
  // the days as one file: what is tested here does not depend on the days coming in separate files
  oneFile(join(ws.dir, 'gen'));
  const passport = await PassportStore.open(ws.paths.passportFile);
  for (const [org, id] of await passport.ensureAccounts(ws.appId, ['tie-driver', 'gone-driver'])) ids.set(org, id);
  passport.close();
  const first = [
    trip('tie-driver', 'tie-a', '2026-10-24T23:50:00+02:00', 900, [{ type: 'brake', from: 10, to: 12 }]),
    trip('tie-driver', 'moved', '2026-10-25T02:30:00+02:00', 3600),
    trip('tie-driver', 'stays', '2026-10-27T08:00:00+01:00', 1200),
    trip('gone-driver', 'gone-1', '2026-10-26T09:00:00+01:00'),
    trip('gone-driver', 'gone-2', '2026-10-28T09:00:00+01:00'),
  ];
  await runLoad({
    dataDir: ws.dir,
    inputs: [join(ws.dir, 'gen'), writeNdjson(join(ws.dir, 'in', 'first.ndjson'), first)],
    now: clock,
  });
  packApi = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 60_000 });
  sqlApi = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 60_000, serving: 'sql' });
}, 120_000);
afterAll(async () => {
  held.releaseAll();
  await packApi?.close();
  await sqlApi?.close();
  ws?.cleanup();
});

describe('serving pack layers', () => {
  it('answer like SQL after every load while deltas are added and merged, and keep a purged user gone', async () => {
    const layers: string[][] = [];
    // 1: a trip that ties in start time with one of the base (ids compared by UTF-8 bytes); a trip moved to another day
    layers.push(
      await loadAndCompare([
        trip('tie-driver', 'tie-b', '2026-10-24T23:50:00+02:00', 300),
        trip('tie-driver', 'moved', '2026-10-29T18:00:00+01:00', 600, [{ type: 'speeding', from: 5, to: 60 }]),
      ]),
    );
    expect(layers[0]).toHaveLength(2);
    // the base the delta was added to stays open for the next publish
    expect(held.paths()).toContain(join(ws.paths.publishedDir, layers[0]?.[0] as string));
    expect((await both('/v1/org-user/tie-driver/trips?startTime=2026-10-24&endTime=2026-10-24')).body).toMatchObject({
      trips: [{ tripId: 'tie-b' }, { tripId: 'tie-a' }],
    });
    // 2: the gone driver is purged; a new trip: the two small deltas merge into one that keeps the purge
    // mark, and the base that held the gone driver's rows is written again without them (a purge
    // reaches every serving file)
    expect(
      (
        await packApi.app.inject({
          method: 'DELETE',
          url: '/v1/org-user/gone-driver',
          headers: { authorization: `Bearer ${key}` },
        })
      ).statusCode,
    ).toBe(200);
    expect(await packRows('gone-driver')).not.toEqual([]);
    layers.push(await loadAndCompare([trip('tie-driver', 'd2', '2026-10-31T07:00:00+01:00')]));
    expect(layers[1]).toEqual([
      expect.stringMatching(/^serving-v\d+-trips-scrubbed\d+\.pack$/),
      expect.stringMatching(/^serving-v\d+-trips-merged\.pack$/),
    ]);
    expect(layers[1]?.[0]).not.toBe(layers[0]?.[0]);
    const merged = SectionFile.open(join(ws.paths.publishedDir, layers[1]?.[1] as string), 'trips');
    try {
      expect(merged.usersOf(ws.appId, true)).toEqual([ids.get('gone-driver')]);
    } finally {
      merged.close();
    }
    expect(await packRows('gone-driver')).toEqual([]);
    // 3: tie-b sent again (same start, another length), and the moved trip back where it was: a third layer
    layers.push(
      await loadAndCompare([
        trip('tie-driver', 'tie-b', '2026-10-24T23:50:00+02:00', 1500),
        trip('tie-driver', 'moved', '2026-10-25T02:30:00+02:00', 1800),
      ]),
    );
    expect(layers[2]).toHaveLength(3);
    expect(await packRows('gone-driver')).toEqual([]);
    // 4: a day of many trips outweighs the layers below it: everything merges into a new base without purge marks
    const many = Array.from({ length: 60 }, (_, i) =>
      trip(
        'tie-driver',
        `many-${String(i).padStart(2, '0')}`,
        `2026-11-01T${String(6 + Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}:00+01:00`,
        600,
      ),
    );
    layers.push(await loadAndCompare(many));
    expect(layers[3]).toEqual([expect.stringMatching(/^serving-v\d+-trips-merged\.pack$/)]);
    expect(layers[3]).not.toEqual([layers[0]?.[0]]);
    const base = SectionFile.open(join(ws.paths.publishedDir, layers[3]?.[0] as string), 'trips');
    try {
      expect(base.usersOf(ws.appId, true)).toEqual([]);
      expect(base.usersOf(ws.appId)).not.toContain(ids.get('gone-driver'));
    } finally {
      base.close();
    }
    expect(await packRows('gone-driver')).toEqual([]);
    // a layer two snapshots name is opened once in a process: the second gets the same open file,
    // which stays open until the last holder gives it back
    const basePath = join(ws.paths.publishedDir, layers[3]?.[0] as string);
    const first = SectionFile.acquire(basePath, 'trips');
    const second = SectionFile.acquire(basePath, 'trips');
    expect(second).toBe(first);
    first.release();
    expect(second.usersOf(ws.appId)).toContain(ids.get('tie-driver'));
    second.release();
    // statistics have layers of their own weights: the day of 60 trips is one row, not merged
    expect(manifestOf(ws.paths)?.pack?.files.stats?.length).toBeGreaterThan(1);
  });
});
