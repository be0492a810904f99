import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { tripRecordSchema, tripRecordValidator } from '../../src/api/upload/trip-record-schema.js';
import { uploadRejection } from '../../src/api/upload/upload-check.js';
import { PassportStore } from '../../src/passport/store.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

// The record format is a contract: the shipped example is valid, the README's upload of it works
// against the real server, and the schema's reasons are the loader's, record by record.
const example = JSON.parse(readFileSync('examples/trip.json', 'utf8')) as Record<string, unknown>;
const clock = new Date('2026-11-23T09:00:00Z');

let ws: Workspace;
let key: string;
let userId: number;

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  userId = (await passport.ensureAccounts(ws.appId, ['driver-1'])).get('driver-1') as number;
  passport.close();
});
afterAll(() => ws.cleanup());

describe('the trip record schema', () => {
  it('accepts examples/trip.json whole, every point and event included', () => {
    const validate = tripRecordValidator();
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(tripRecordValidator()).toBe(validate);
    expect((example['points'] as unknown[]).length).toBeGreaterThan(100);
  });

  it('names for each property the reason the loader gives, and judges points and events without rejecting', () => {
    expect(
      Object.entries(tripRecordSchema.properties)
        .filter(([, s]) => s['x-rejectReason'])
        .map(([p]) => p),
    ).toEqual(['appId', 'platformUserId', 'orgUserId', 'tripId', 'os', 'coordinate', 'startTime', 'endTime']);
    const badPoint = { ...example, points: [{ t: 1, lat: 91, lng: 0, speed: -1 }] };
    expect(tripRecordValidator()(badPoint)).toBe(false);
    expect(uploadRejection(badPoint, clock)).toBeNull();
  });

  it('gives at upload exactly the reason the load gives the same record in a file', async () => {
    const good = tripRecord({
      appId: ws.appId,
      tripId: 'ok',
      userId,
      orgUserId: 'driver-1',
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
    });
    const cases: Record<string, unknown>[] = [
      { tripId: '' },
      { tripId: 5 },
      { tripId: 'x'.repeat(129) },
      { tripId: 'x'.repeat(128) },
      { os: 'windows' },
      { os: undefined },
      { coordinate: 'ED50' },
      { coordinate: null },
      { coordinate: 'GCJ02' },
      { startTime: '2026-11-20T08:00:00' },
      { startTime: 'yesterday' },
      { startTime: '2026-11-20 08:00:00Z' },
      { startTime: Date.UTC(2026, 10, 20, 7) },
      { endTime: true },
      { endTime: undefined },
      { endTime: '2026-11-20T08:10:00.500+01:00' },
      { startTime: '1999-12-31T23:59:59Z' },
      { endTime: '2026-11-23T09:10:01Z' },
      { endTime: '2026-11-23T09:10:00Z' },
      { os: 'windows', startTime: 'x' },
      { coordinate: 'x', tripId: '' },
      { points: 'none' },
      { events: [{ type: 'wheelie' }] },
      { isAutoStart: 'yes', deviceId: 7 },
    ];
    const records = cases.map((change, i) => {
      const r: Record<string, unknown> = {
        ...good,
        ...change,
        tripId: 'tripId' in change ? change['tripId'] : `case-${i}`,
      };
      for (const [k, v] of Object.entries(change)) if (v === undefined) delete r[k];
      return r;
    });
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'cases.ndjson'), records)], now: clock });
    const rows = await warehouseRows(
      ws.paths,
      "select line_no, reason from quarantine where kind = 'record' order by line_no",
    );
    const atLoad = new Map(rows.map((r) => [Number(r['line_no']), String(r['reason'])]));
    const atUpload = records.map((r) => {
      const { appId: _a, platformUserId: _p, orgUserId: _o, ...sdk } = r;
      return uploadRejection(sdk, clock)?.reason ?? null;
    });
    expect(atUpload).toEqual(records.map((_, i) => atLoad.get(i + 1) ?? null));
    // the corpus reaches every record-level reason an upload can give
    expect(new Set(atUpload)).toEqual(
      new Set([
        null,
        'missing_trip_id',
        'invalid_trip_id',
        'invalid_os',
        'invalid_coordinate',
        'invalid_start_time',
        'invalid_end_time',
        'time_out_of_range',
      ]),
    );
  });
});

describe("the README's upload of examples/trip.json", () => {
  it('is accepted by the real server, loaded, and served as a normal trip with its two events', async () => {
    const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    try {
      const base = await api.app.listen({ host: '127.0.0.1', port: 0 });
      const issued = (await (
        await fetch(`${base}/v1/org-user/driver-1/token`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { token: string };
      const res = await fetch(`${base}/v1/sdk/trips`, {
        method: 'POST',
        headers: { authorization: `Bearer ${issued.token}`, 'content-type': 'application/json' },
        body: readFileSync('examples/trip.json'),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ code: 0, message: 'accepted', accepted: 1, rejected: [] });
      await runLoad({ dataDir: ws.dir, now: clock });
      await api.ctx.snapshots.refresh();
      const detail = (await (
        await fetch(`${base}/v1/org-user/driver-1/trip/${example['tripId']}`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { trip: Record<string, unknown> };
      expect(detail.trip).toMatchObject({
        tripId: example['tripId'],
        status: 'normal',
        os: 'android',
        startTime: '2026-11-21 13:09:39',
        endTime: '2026-11-21 13:14:39',
      });
      expect((detail.trip['events'] as unknown[]).length).toBe(2);
    } finally {
      await api.close();
    }
  });
});
