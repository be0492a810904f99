// A file fails alone, and re-sends never stop the publishing (docs/decisions.md, "A file fails
// alone"): a corpus of corrected files an integrator sends again (times moved earlier and later,
// overlaps made and undone, events removed and added, points cut, a trip moved to another day),
// each alone and each beside the DELETE of a neighbour. After every load, the next load exits
// clean, and every served trip's eventCount equals its detail's events and the events the last
// record of that trip carried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad, type LoadResult } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';

type Ev = { type: string; from: number; to: number };
interface Sent {
  start: string;
  seconds: number;
  events: Ev[];
}

const brake = (from: number): Ev => ({ type: 'brake', from, to: from + 3 });
const DRIVER = 'd-1';
const NEIGHBOURS = Array.from({ length: 8 }, (_, i) => `n-${i + 1}`);

/** The driver's trips as first sent (Berlin time): C crosses midnight, D is the next morning. */
const BASE: Record<string, Sent> = {
  A: { start: '2026-11-20T08:00:00+01:00', seconds: 600, events: [brake(100)] },
  B: { start: '2026-11-20T09:00:00+01:00', seconds: 600, events: [brake(50), brake(200)] },
  C: { start: '2026-11-20T23:50:00+01:00', seconds: 1200, events: [brake(700)] },
  D: { start: '2026-11-21T07:00:00+01:00', seconds: 600, events: [] },
};

/** Each step re-sends some of the driver's trips with these changes, in order. */
const STEPS: [name: string, changes: Record<string, Partial<Sent>>][] = [
  ['A moved earlier', { A: { start: '2026-11-20T07:30:00+01:00' } }],
  ['A moved later, onto B (an overlap made: B arrived after A)', { A: { start: '2026-11-20T08:58:00+01:00' } }],
  ['A moved back (the overlap undone: B is judged again)', { A: { start: '2026-11-20T08:00:00+01:00' } }],
  ['B overlapping again, and its events removed', { A: { start: '2026-11-20T08:55:00+01:00' }, B: { events: [] } }],
  ['B with events added while overlapping', { B: { events: [brake(10), brake(300), brake(500)] } }],
  ['the overlap undone and C cut short', { A: { start: '2026-11-20T08:00:00+01:00' }, C: { seconds: 300 } }],
  ['D moved to the day before, onto C', { D: { start: '2026-11-20T23:52:00+01:00' } }],
  [
    'D moved back and C its full length again',
    { D: { start: '2026-11-21T07:00:00+01:00' }, C: { seconds: 1200, events: [brake(700), brake(900)] } },
  ],
];

let clock = new Date('2026-11-21T12:00:00Z');

class Corpus {
  ws!: Workspace;
  key!: string;
  ids = new Map<string, number>();
  /** The last record sent of each trip of the driver, and which neighbours are still there. */
  sent: Record<string, Sent> = structuredClone(BASE);
  neighbours = new Set(NEIGHBOURS);
  fileNo = 0;
  api!: Awaited<ReturnType<typeof createApi>>;

  async start(): Promise<void> {
    this.ws = await workspace('Europe/Berlin');
    this.key = (await new AppStore(this.ws.paths.appsFile).rotateKey(this.ws.appId)).apiKey;
    const passport = await PassportStore.open(this.ws.paths.passportFile);
    this.ids = await passport.ensureAccounts(this.ws.appId, [DRIVER, ...NEIGHBOURS]);
    passport.close();
    const neighbourTrips = NEIGHBOURS.map((n) =>
      this.record(n, `${n}-trip`, { start: '2026-11-20T08:30:00+01:00', seconds: 900, events: [brake(60)] }),
    );
    const result = await this.load([
      ...Object.keys(BASE).map((id) => this.record(DRIVER, id, BASE[id] as Sent)),
      ...neighbourTrips,
    ]);
    expect(result.totals.filesFailed).toBe(0);
    this.api = await createApi({ dataDir: this.ws.dir, now: () => clock, pollMs: 20 });
  }

  record(orgUserId: string, tripId: string, s: Sent): Record<string, unknown> {
    return tripRecord({
      appId: this.ws.appId,
      tripId,
      userId: this.ids.get(orgUserId) as number,
      orgUserId,
      start: s.start,
      seconds: s.seconds,
      events: s.events,
    });
  }

  async load(records: unknown[]): Promise<LoadResult> {
    clock = new Date(clock.getTime() + 60_000);
    const inputs = records.length > 0 ? [writeNdjson(join(this.ws.dir, 'in', `${++this.fileNo}.ndjson`), records)] : [];
    return runLoad({ dataDir: this.ws.dir, inputs, now: clock });
  }

  async resend(changes: Record<string, Partial<Sent>>, deleteNeighbour: boolean): Promise<LoadResult> {
    for (const [id, change] of Object.entries(changes)) this.sent[id] = { ...(this.sent[id] as Sent), ...change };
    if (deleteNeighbour) {
      const gone = [...this.neighbours][0] as string;
      this.neighbours.delete(gone);
      await recordDeletionIn(this.ws.dir, {
        appId: this.ws.appId,
        platformUserId: this.ids.get(gone) as number,
        orgUserId: gone,
        requestedAt: clock.toISOString(),
      });
    }
    return this.load(Object.keys(changes).map((id) => this.record(DRIVER, id, this.sent[id] as Sent)));
  }

  async get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${this.key}` } });
    return { status: res.statusCode, body: res.json() };
  }

  /** Waits until the API serves `version`, then checks every trip it serves of the driver and the neighbours. */
  async checkServed(version: number): Promise<void> {
    await expect.poll(() => this.api.ctx.snapshots.manifest?.version, { timeout: 30_000, interval: 20 }).toBe(version);
    const served = await this.tripsOf(DRIVER);
    expect(served.map((t) => t.tripId).sort()).toEqual(Object.keys(this.sent).sort());
    for (const trip of served) await this.checkTrip(DRIVER, trip, this.sent[trip.tripId]?.events.length);
    for (const n of NEIGHBOURS) {
      const trips = await this.tripsOf(n);
      if (!this.neighbours.has(n)) expect(trips, `${n} was deleted`).toEqual([]);
      else for (const trip of trips) await this.checkTrip(n, trip, 1);
    }
  }

  async tripsOf(orgUserId: string): Promise<{ tripId: string; eventCount: number }[]> {
    const res = await this.get(`/v1/org-user/${orgUserId}/trips?limit=100`);
    if (res.status === 404) return [];
    expect(res.status).toBe(200);
    return res.body['trips'] as { tripId: string; eventCount: number }[];
  }

  async checkTrip(
    orgUserId: string,
    trip: { tripId: string; eventCount: number },
    expected: number | undefined,
  ): Promise<void> {
    const detail = await this.get(`/v1/org-user/${orgUserId}/trip/${trip.tripId}`);
    expect(detail.status, `${orgUserId}/${trip.tripId}`).toBe(200);
    const detailTrip = detail.body['trip'] as { events: unknown[] };
    expect({ trip: trip.tripId, eventCount: trip.eventCount, detailEvents: detailTrip.events.length }).toEqual({
      trip: trip.tripId,
      eventCount: expected,
      detailEvents: expected,
    });
  }
}

describe.each([
  ['alone', false],
  ['each beside the DELETE of a neighbour', true],
])('re-sent corrected files, %s', (_label, withDelete) => {
  const corpus = new Corpus();
  beforeAll(() => corpus.start());
  afterAll(async () => {
    await corpus.api?.close();
    corpus.ws?.cleanup();
  });

  it.each(STEPS.map(([name, changes], i) => [i + 1, name, changes] as const))(
    'step %i, %s: loads and publishes, and so does the next load',
    async (_i, _name, changes) => {
      const result = await corpus.resend(changes, withDelete);
      expect(result.files.map((f) => f.failed ?? 'loaded')).toEqual(['loaded']);
      const next = await corpus.load([]);
      expect(next.totals.filesFailed).toBe(0);
      await corpus.checkServed(next.publish.version);
    },
  );
});
