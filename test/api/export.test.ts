// The bulk export read back with apache-arrow's reader (and as NDJSON) and compared, trip by
// trip, with what the paged trip list and the trip detail serve; batches smaller than the data so
// the keyset crosses batch boundaries (equal start times included); a deleted user absent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/processes.js';
import { tableFromIPC } from 'apache-arrow';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;
let otherKey: string;
const clock = new Date('2026-11-21T09:00:00Z');
const USERS = ['driver-a', 'driver-b', 'driver-gone'];
const inject = (url: string, accept: string, apiKey = key) =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}`, accept } });

beforeAll(async () => {
  process.env['DRIVING_API_EXPORT_BATCH_TRIPS'] = '7';
  ws = await workspace('Europe/Berlin');
  const store = new AppStore(ws.paths.appsFile);
  key = (await store.rotateKey(ws.appId)).apiKey;
  const other = await store.add({ name: 'other', timeZone: 'UTC' });
  otherKey = other.apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, USERS);
  const otherId = (await passport.ensureAccounts(other.appId, ['driver-a'])).get('driver-a') as number;
  passport.close();
  // two users start trips at the same instants: the keyset must order by user too
  const trips = USERS.flatMap((orgUserId, u) =>
    Array.from({ length: 10 }, (_, i) =>
      tripRecord({
        appId: ws.appId,
        tripId: `trip-${u}-${String(i).padStart(2, '0')}`,
        userId: ids.get(orgUserId) as number,
        orgUserId,
        start: `2026-11-${String(1 + i).padStart(2, '0')}T0${7 + (i % 3)}:00:00+01:00`,
        seconds: 600,
        events:
          i % 3 === 0
            ? [
                { type: 'brake', from: 100, to: 103 },
                { type: 'accel', from: 200, to: 202 },
              ]
            : [],
        // an event outside its trip's time is still the trip's: nothing may find events by time
        ...(i === 4 ? { extra: { events: [outsideEvent(`2026-11-0${1 + i}T05:00:00Z`)] } } : {}),
      }),
    ),
  );
  trips.push(
    tripRecord({
      appId: other.appId,
      tripId: 'trip-other',
      userId: otherId,
      orgUserId: 'driver-a',
      start: '2026-11-03T08:00:00+01:00',
      seconds: 600,
    }),
  );
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), trips)], now: clock });
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  const deleted = await api.app.inject({
    method: 'DELETE',
    url: '/v1/org-user/driver-gone',
    headers: { authorization: `Bearer ${key}` },
  });
  expect(deleted.statusCode).toBeLessThan(300);
});
afterAll(async () => {
  delete process.env['DRIVING_API_EXPORT_BATCH_TRIPS'];
  await api.close();
  ws.cleanup();
});

function outsideEvent(start: string): Record<string, unknown> {
  const end = new Date(Date.parse(start) + 5_000).toISOString();
  return {
    type: 'brake',
    startTime: start,
    endTime: end,
    startPoint: { lat: 52.5, lng: 13.4 },
    endPoint: { lat: 52.5, lng: 13.4 },
  };
}

type Trip = Record<string, unknown> & { tripId: string; orgUserId: string };

/** What operations 1 and 2 serve: every page of the trip list, each trip's detail, per user. */
async function servedTrips(users: string[], query = ''): Promise<Trip[]> {
  const all: Trip[] = [];
  for (const orgUserId of users) {
    let cursor: string | undefined;
    do {
      const page = (
        await inject(
          `/v1/org-user/${orgUserId}/trips?limit=3${query}${cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : ''}`,
          'application/json',
        )
      ).json();
      for (const brief of page.trips) {
        const detail = (await inject(`/v1/org-user/${orgUserId}/trip/${brief.tripId}`, 'application/json')).json().trip;
        // the detail serves every field of the list but eventCount
        const { eventCount, ...shared } = brief;
        expect(detail).toMatchObject(shared);
        all.push({ ...detail, eventCount, orgUserId, userId: page.userId });
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return all;
}

const byUserAndTrip = (a: Trip, b: Trip) => `${a.orgUserId} ${a.tripId}`.localeCompare(`${b.orgUserId} ${b.tripId}`);

/** An Arrow row as plain JSON: Int64 as a number, nested vectors as arrays, null POIs left out. */
function plain(row: Record<string, unknown>): Trip {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (value === null) continue;
    if (typeof value === 'bigint') out[name] = Number(value);
    else if (name === 'events')
      out[name] = (value as { toArray(): { toJSON(): Record<string, unknown> }[] })
        .toArray()
        .map((e) => JSON.parse(JSON.stringify(e.toJSON())));
    else if (typeof value === 'object')
      out[name] = JSON.parse(JSON.stringify((value as { toJSON(): unknown }).toJSON()));
    else out[name] = value;
  }
  return out as Trip;
}

describe('GET /v1/exports/trips', () => {
  it('streams Arrow IPC equal, trip by trip, to the trip list and detail; oldest first; the deleted user absent', async () => {
    const res = await inject('/v1/exports/trips', 'application/vnd.apache.arrow.stream');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.arrow.stream');
    const table = tableFromIPC(res.rawPayload);
    expect(table.batches.length).toBe(3); // 20 trips in batches of 7
    const exported = table.toArray().map((r) => plain(r.toJSON() as Record<string, unknown>));
    expect(exported).toHaveLength(20);
    expect(new Set(exported.map((t) => t.orgUserId))).toEqual(new Set(['driver-a', 'driver-b']));
    const served = await servedTrips(['driver-a', 'driver-b']);
    expect(served).toHaveLength(20);
    expect([...exported].sort(byUserAndTrip)).toEqual([...served].sort(byUserAndTrip));
    // events are part of what is compared: some trips have them
    expect(exported.filter((t) => (t['events'] as unknown[]).length > 0).length).toBeGreaterThanOrEqual(6);
    // oldest first: by start, then user
    const starts = exported.map((t) => String(t['startTime']));
    expect(starts).toEqual([...starts].sort());
  });

  it('streams NDJSON with the same trips, and bounds the start time as the trip list does', async () => {
    const res = await inject('/v1/exports/trips?startTime=2026-11-03&endTime=2026-11-06', 'application/x-ndjson');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const exported = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Trip);
    const served = await servedTrips(['driver-a', 'driver-b'], '&startTime=2026-11-03&endTime=2026-11-06');
    expect(exported).toHaveLength(8);
    expect([...exported].sort(byUserAndTrip)).toEqual([...served].sort(byUserAndTrip));
  });

  it('in batches of 2, many batches over a range, equals the paged trip list trip by trip in both formats, each trip once, by start then trip', async () => {
    process.env['DRIVING_API_EXPORT_BATCH_TRIPS'] = '2';
    try {
      const table = tableFromIPC((await inject('/v1/exports/trips', 'application/vnd.apache.arrow.stream')).rawPayload);
      expect(table.batches.map((b) => b.numRows)).toEqual(Array.from({ length: 10 }, () => 2));
      const arrow = table.toArray().map((r) => plain(r.toJSON() as Record<string, unknown>));
      const lines = (await inject('/v1/exports/trips', 'application/x-ndjson')).body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Trip);
      expect(lines).toEqual(arrow);
      const served = await servedTrips(['driver-a', 'driver-b']);
      expect([...arrow].sort(byUserAndTrip)).toEqual([...served].sort(byUserAndTrip));
      expect(new Set(arrow.map((t) => t.tripId)).size).toBe(20);
      // the keyset's order: start, then trip id (two users start trips at the same instants)
      const keys = arrow.map((t) => `${String(t['startTime'])} ${t.tripId}`);
      expect(keys).toEqual([...keys].sort());
      expect(arrow.find((t) => t.tripId === 'trip-0-04')?.['events']).toEqual([
        expect.objectContaining({ startTime: '2026-11-05 06:00:00' }),
      ]);
      // a bounded range whose trips fill their last batch exactly (8 trips, 4 batches)
      const ranged = (
        await inject('/v1/exports/trips?startTime=2026-11-03&endTime=2026-11-06', 'application/x-ndjson')
      ).body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Trip);
      const servedRange = await servedTrips(['driver-a', 'driver-b'], '&startTime=2026-11-03&endTime=2026-11-06');
      expect(ranged).toHaveLength(8);
      expect([...ranged].sort(byUserAndTrip)).toEqual([...servedRange].sort(byUserAndTrip));
    } finally {
      process.env['DRIVING_API_EXPORT_BATCH_TRIPS'] = '7';
    }
  });

  it('gives another app its own trips only, an empty range a valid empty stream, and refuses what it cannot answer with a 400', async () => {
    const other = tableFromIPC(
      (await inject('/v1/exports/trips', 'application/vnd.apache.arrow.stream', otherKey)).rawPayload,
    );
    expect(other.toArray().map((r) => r.toJSON()['tripId'])).toEqual(['trip-other']);
    const empty = await inject(
      '/v1/exports/trips?startTime=2020-01-01&endTime=2020-01-02',
      'application/vnd.apache.arrow.stream',
    );
    expect(empty.statusCode).toBe(200);
    const table = tableFromIPC(empty.rawPayload);
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => f.name)).toContain('events');
    expect((await inject('/v1/exports/trips', 'text/csv')).json()).toMatchObject({
      code: 40001,
      message: expect.stringMatching(/^Accept: /),
    });
    expect((await inject('/v1/exports/trips?startTime=soon', 'application/x-ndjson')).json().message).toMatch(
      /^startTime: /,
    );
    expect(
      (await inject('/v1/exports/trips?startTime=2026-11-05&endTime=2026-11-01', 'application/x-ndjson')).json()
        .message,
    ).toMatch(/^endTime: /);
    expect((await inject('/v1/exports/trips', 'application/x-ndjson', 'dk_nope')).statusCode).toBe(401);
  });

  it('honours the q-values of Accept: q=0 refuses a type, the highest q wins, a type named outright counts over a wildcard', async () => {
    const answer = async (accept: string) => {
      const res = await inject('/v1/exports/trips', accept);
      return res.statusCode === 200 ? String(res.headers['content-type']).split(';')[0] : res.statusCode;
    };
    const [arrow, ndjson] = ['application/vnd.apache.arrow.stream', 'application/x-ndjson'];
    expect(await answer(`${arrow};q=0, ${ndjson}`)).toBe(ndjson);
    expect(await answer(`${ndjson};q=0.5, ${arrow};q=0.9`)).toBe(arrow);
    expect(await answer(`${arrow};q=0.5, ${ndjson}`)).toBe(ndjson);
    expect(await answer(`${arrow};q=0.5, */*`)).toBe(ndjson);
    expect(await answer(`${ndjson};q=0, */*`)).toBe(arrow);
    expect(await answer(`${ndjson}, ${arrow}`)).toBe(arrow);
    expect(await answer(`${ndjson}, ${arrow};q=1.0`)).toBe(arrow);
    expect(await answer(`${arrow};q=0, ${ndjson};q=0`)).toBe(400);
    expect(await answer('*/*;q=0')).toBe(400);
    expect((await inject('/v1/exports/trips', `${arrow};q=high`)).json().message).toBe(
      "Accept: q must be a number from 0 to 1, got 'high'",
    );
  });

  it('leaves the served slot locked against a writer after an export (its own DuckDB instance closes with the snapshot only)', async () => {
    expect((await inject('/v1/exports/trips', 'application/x-ndjson')).statusCode).toBe(200);
    const slot = join(
      ws.paths.publishedDir,
      (JSON.parse(readFileSync(ws.paths.manifestFile, 'utf8')) as { file: string }).file,
    );
    // another process, as a publish would: the kernel's record lock is per process, so this one cannot test it itself
    const opened = spawnSync(
      process.execPath,
      [
        '-e',
        `require('@duckdb/node-api').DuckDBInstance.create(${JSON.stringify(slot)}).then(() => console.log('opened'), (e) => console.log(e.message))`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(opened.stdout).toMatch(/lock/i);
  });

  it('is in the OpenAPI document with both media types, beside the webhook API', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths['/v1/exports/trips'].get.responses['200'].content)).toEqual([
      'application/vnd.apache.arrow.stream',
      'application/x-ndjson',
    ]);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/webhooks/endpoint',
        '/v1/webhooks/endpoint/test',
        '/v1/webhooks/deliveries',
        '/v1/webhooks/deliveries/{eventId}/resend',
        '/v1/webhooks/recover',
        '/v1/webhooks/secret/rotate',
      ]),
    );
  });
});
