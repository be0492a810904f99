// A string with a lone UTF-16 surrogate has no UTF-8 form: the load refuses its whole line
// (invalid_json). The SDK upload refuses such a record at once, per record, naming the field; a
// well-formed pair (an emoji) is accepted. Real upload route in process, real load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { loneSurrogatePath } from '../../src/api/upload/well-formed.js';
import { warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';

const clock = new Date('2026-11-21T09:00:00Z');
let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let token: string;

const record = (tripId: string, extra: Record<string, unknown> = {}) => ({
  tripId,
  os: 'ios',
  startTime: '2026-11-20T10:00:00Z',
  endTime: '2026-11-20T10:10:00Z',
  points: [
    { t: '2026-11-20T10:00:00Z', lat: 52.5, lng: 13.4, speed: 10 },
    { t: '2026-11-20T10:10:00Z', lat: 52.55, lng: 13.4, speed: 10 },
  ],
  ...extra,
});
// sent as JSON text: "\ud800" is valid JSON, and JSON.parse gives the lone surrogate
const upload = (body: unknown) =>
  api.app.inject({
    method: 'POST',
    url: '/v1/sdk/trips',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

beforeAll(async () => {
  ws = await workspace('UTC');
  const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  token = (
    await api.app.inject({ method: 'POST', url: '/v1/org-user/u1/token', headers: { authorization: `Bearer ${key}` } })
  ).json().token;
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('a lone UTF-16 surrogate in a record', () => {
  it('in the tripId of the only record: 400 naming the field', async () => {
    const res = await upload(record('trip-\ud800'));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter' });
    expect(res.json().message).toContain('invalid_json (tripId: a lone UTF-16 surrogate)');
  });

  it('beside valid records: refused per record with the field; the rest land and load', async () => {
    const res = await upload([
      record('good-1'),
      record('trip-\udc00x'),
      record('good-2', { deviceId: 'phone 📱' }),
      record('bad-desc', {
        events: [
          {
            type: 'brake',
            startTime: '2026-11-20T10:01:00Z',
            endTime: '2026-11-20T10:01:01Z',
            startPoint: { lat: 52.5, lng: 13.4 },
            endPoint: { lat: 52.5, lng: 13.4 },
            description: 'x\ud83d',
          },
        ],
      }),
      record('bad-key', { startPoi: 'ok', ['\udfff']: 1 }),
    ]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      code: 0,
      message: 'accepted',
      accepted: 2,
      rejected: [
        { index: 1, reason: 'invalid_json', field: 'tripId' },
        { index: 3, tripId: 'bad-desc', reason: 'invalid_json', field: 'events[0].description' },
        { index: 4, tripId: 'bad-key', reason: 'invalid_json', field: '\udfff' },
      ],
    });
    const loaded = await runLoad({ dataDir: ws.dir, now: clock });
    expect(loaded.totals.rejected).toEqual({});
    expect(loaded.totals.tripsLoaded).toBe(2);
    expect(await warehouseRows(ws.paths, 'select trip_id, device_id from trips order by trip_id')).toEqual([
      { trip_id: 'good-1', device_id: '' },
      { trip_id: 'good-2', device_id: 'phone 📱' },
    ]);
  });

  it('finds the first lone surrogate by path, and none in well-formed pairs', () => {
    expect(loneSurrogatePath({ a: 'ok', b: ['x', { c: '\ud800' }] })).toBe('b[1].c');
    expect(loneSurrogatePath({ a: '\udc00\ud800' })).toBe('a');
    expect(loneSurrogatePath({ a: '😀', b: ['\ud83d\ude00'] })).toBeNull();
    expect(loneSurrogatePath({ a: 'end\ud83d' })).toBe('a');
  });
});
