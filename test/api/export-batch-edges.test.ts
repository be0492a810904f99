// The bulk export's events at batch edges: each batch's events are read by a range of event times
// (the batch's first trip start to its last trip end), so this data puts events where a range
// would go wrong: a long trip whose events fall among the next batch's trips, equal start times
// on both sides of an edge, and an event before its own trip's (and batch's) first start. Each
// trip must carry exactly its own events, as written here by hand and as the trip detail serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
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
const clock = new Date('2026-11-21T09:00:00Z');
const DAY = '2026-11-10';

/** Each trip: its user, start (UTC, on DAY), length, and its events as [type, start, seconds long]. */
const TRIPS: { id: string; user: string; start: string; seconds: number; events: [string, string, number][] }[] = [
  { id: 'e-1', user: 'u1', start: '08:00:00', seconds: 600, events: [['brake', '08:01:00', 3]] },
  // two hours long: its events start after every start of the next batch's trips
  {
    id: 'e-2',
    user: 'u2',
    start: '08:00:00',
    seconds: 7200,
    events: [
      ['brake', '08:40:00', 4],
      ['throttle', '09:30:00', 2],
    ],
  },
  { id: 'e-3', user: 'u3', start: '08:00:00', seconds: 600, events: [['throttle', '08:05:00', 2]] },
  // the same start as the last trip of the batch before, an event inside that batch's times
  { id: 'e-4', user: 'u4', start: '08:00:00', seconds: 600, events: [['brake', '08:02:00', 3]] },
  // an event ten minutes before its trip starts, before every trip of its batch
  {
    id: 'e-5',
    user: 'u5',
    start: '08:30:00',
    seconds: 600,
    events: [
      ['brake', '07:50:00', 5],
      ['brake', '08:31:00', 2],
    ],
  },
  { id: 'e-6', user: 'u6', start: '09:00:00', seconds: 600, events: [] },
  { id: 'e-7', user: 'u1', start: '11:00:00', seconds: 600, events: [['brake', '11:01:00', 3]] },
];
const at = (time: string, plusSeconds = 0) =>
  new Date(Date.parse(`${DAY}T${time}Z`) + plusSeconds * 1000).toISOString();
const local = (iso: string) => iso.slice(0, 19).replace('T', ' ');

beforeAll(async () => {
  process.env['DRIVING_API_EXPORT_BATCH_TRIPS'] = '3';
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, [...new Set(TRIPS.map((t) => t.user))]);
  passport.close();
  const records = TRIPS.map((t) =>
    tripRecord({
      appId: ws.appId,
      tripId: t.id,
      userId: ids.get(t.user) as number,
      orgUserId: t.user,
      start: at(t.start),
      seconds: t.seconds,
      extra: {
        events: t.events.map(([type, start, seconds]) => ({
          type,
          startTime: at(start),
          endTime: at(start, seconds),
          startPoint: { lat: 52.5, lng: 13.4 },
          endPoint: { lat: 52.51, lng: 13.4 },
        })),
      },
    }),
  );
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), records)], now: clock });
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
});
afterAll(async () => {
  delete process.env['DRIVING_API_EXPORT_BATCH_TRIPS'];
  await api?.close();
  ws?.cleanup();
});

const inject = (url: string, accept: string) =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, accept } });
/** A trip's events as written above, in the export's fields. */
const expected = (id: string) =>
  (TRIPS.find((t) => t.id === id)?.events ?? []).map(([type, start, seconds]) => ({
    type,
    startTime: local(at(start)),
    endTime: local(at(start, seconds)),
  }));
const brief = (events: Record<string, unknown>[]) =>
  events.map((e) => ({ type: e['type'], startTime: e['startTime'], endTime: e['endTime'] }));

describe('GET /v1/exports/trips at batch edges', () => {
  it("gives each batch exactly its own trips' events, in Arrow and NDJSON, equal to the trip detail's", async () => {
    const table = tableFromIPC((await inject('/v1/exports/trips', 'application/vnd.apache.arrow.stream')).rawPayload);
    // keyset (start, trip id): the four trips starting at 08:00 are cut 3 + 1 across the first edge
    const batches = table.batches.map((b) => b.toArray().map((r) => r.toJSON() as Record<string, unknown>));
    expect(batches.map((b) => b.map((t) => t['tripId']))).toEqual([
      ['e-1', 'e-2', 'e-3'],
      ['e-4', 'e-5', 'e-6'],
      ['e-7'],
    ]);
    const arrow = batches.flat().map((t) => ({
      tripId: t['tripId'],
      events: brief(
        (t['events'] as { toArray(): { toJSON(): Record<string, unknown> }[] }).toArray().map((e) => e.toJSON()),
      ),
    }));
    const lines = (await inject('/v1/exports/trips', 'application/x-ndjson')).body
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { tripId: string; events: Record<string, unknown>[]; orgUserId: string; eventCount: number },
      );
    for (const [i, t] of TRIPS.entries()) {
      expect(arrow[i]).toEqual({ tripId: t.id, events: expected(t.id) });
      expect({ tripId: lines[i]?.tripId, events: brief(lines[i]?.events ?? []) }).toEqual({
        tripId: t.id,
        events: expected(t.id),
      });
      expect(lines[i]?.eventCount).toBe(t.events.length);
      const detail = (
        await api.app.inject({
          method: 'GET',
          url: `/v1/org-user/${t.user}/trip/${t.id}`,
          headers: { authorization: `Bearer ${key}` },
        })
      ).json().trip;
      expect(lines[i]?.events).toEqual(detail.events);
    }
  });

  it('bounds each batch by its own times: a range that starts at the second batch gives its trips all their events', async () => {
    const lines = (
      await inject(`/v1/exports/trips?startTime=${DAY} 08:30:00&endTime=${DAY} 23:00:00`, 'application/x-ndjson')
    ).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tripId: string; events: Record<string, unknown>[] });
    expect(lines.map((l) => l.tripId)).toEqual(['e-5', 'e-6', 'e-7']);
    for (const l of lines) expect(brief(l.events)).toEqual(expected(l.tripId));
  });
});
