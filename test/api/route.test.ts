import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { readRoute } from '../../src/route/route-file.js';
import { openDatabase } from '../../src/db/open.js';
import { routeOptions, writeRoutes } from '../../src/warehouse/route-files.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

// The route of a trip against the real server on a loopback port. The expected points are worked
// out here from the records themselves (which points the drop rules remove), and the expected
// simplification by a separate, recursive Douglas–Peucker written for this test.

let ws: Workspace;
let key: string;
let otherKey: string;
let api: Awaited<ReturnType<typeof createApi>>;
let base: string;
const clock = new Date('2026-11-21T09:00:00Z');
const START = Date.parse('2026-11-20T07:00:00+01:00');

interface P {
  t: number;
  lat: number;
  lng: number;
  speed: number;
}

/** 1 Hz along a wavy line north: a shape Douglas–Peucker has something to do with. */
function wavy(seconds: number, startMs = START): P[] {
  return Array.from({ length: seconds + 1 }, (_, i) => ({
    t: startMs + i * 1000,
    lat: 52.5 + (i * 12) / 111_195,
    lng: 13.4 + 0.0015 * Math.sin(i / 15) + 0.0004 * Math.sin(i / 3.7),
    speed: 12 + (i % 7) / 10,
  }));
}

const record = (
  tripId: string,
  orgUserId: string,
  userId: number,
  points: P[],
  extra: Record<string, unknown> = {},
) => ({
  appId: ws.appId,
  platformUserId: userId,
  orgUserId,
  tripId,
  os: 'ios',
  startTime: new Date(points[0]!.t).toISOString(),
  endTime: new Date(points[points.length - 1]!.t).toISOString(),
  points,
  ...extra,
});

// the main trip: 900 valid points, plus a spike, a repeated time, an out-of-range latitude and a
// negative speed, each of which the load drops
const main = wavy(900);
const delivered: P[] = [...main];
delivered.splice(301, 0, { ...main[300]!, lat: main[300]!.lat + 0.001 }); // same t as point 300, delivered after it
delivered[100] = { ...main[100]!, lat: main[100]!.lat + 0.05 }; // 5.5 km away and back within a second: a spike
delivered.splice(451, 0, { t: START + 450_500, lat: 95, lng: 13.4, speed: 10 }); // |lat| > 90
delivered.splice(453, 0, { t: START + 451_500, lat: 52.6, lng: 13.4, speed: -1 }); // negative speed
const keptMain = main.filter((_, i) => i !== 100);

let userId: number;
let leaverId: number;

// ---------- an independent reference: recursive Douglas–Peucker on its own projection ----------
const R = 6_371_008.8;
function projectRef(points: P[]): [number, number][] {
  const o = points[0]!;
  const k = Math.cos((o.lat * Math.PI) / 180);
  return points.map((p) => [((p.lng - o.lng) * Math.PI * R * k) / 180, ((p.lat - o.lat) * Math.PI * R) / 180]);
}
function distToSegment([px, py]: [number, number], [ax, ay]: [number, number], [bx, by]: [number, number]): number {
  const abx = bx - ax,
    aby = by - ay;
  const len = abx * abx + aby * aby;
  if (len === 0) return Math.sqrt((px - ax) ** 2 + (py - ay) ** 2);
  let u = ((px - ax) * abx + (py - ay) * aby) / len;
  u = u < 0 ? 0 : u > 1 ? 1 : u;
  return Math.sqrt((px - (ax + u * abx)) ** 2 + (py - (ay + u * aby)) ** 2);
}
function referenceDp(points: P[], tol: number): number[] {
  const xy = projectRef(points);
  const out = new Set<number>([0, points.length - 1]);
  const rec = (a: number, b: number) => {
    let best = -1,
      bestD = -1;
    for (let i = a + 1; i < b; i++) {
      const d = distToSegment(xy[i]!, xy[a]!, xy[b]!);
      if (d > bestD) {
        bestD = d;
        best = i;
      }
    }
    if (best >= 0 && bestD > tol) {
      out.add(best);
      rec(a, best);
      rec(best, b);
    }
  };
  rec(0, points.length - 1);
  return [...out].sort((x, y) => x - y);
}

const get = (path: string, apiKey = key) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
const routeOf = async (path: string, apiKey = key) => {
  const res = await get(path, apiKey);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const store = new AppStore(ws.paths.appsFile);
  key = (await store.rotateKey(ws.appId)).apiKey;
  otherKey = (await store.add({ name: 'other', timeZone: 'UTC' })).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const ids = await passport.ensureAccounts(ws.appId, ['driver-1', 'leaver']);
  userId = ids.get('driver-1') as number;
  leaverId = ids.get('leaver') as number;
  passport.close();
  const gcj = wavy(120, START + 3_600_000);
  const old = wavy(120, Date.parse('2026-10-01T07:00:00+02:00'));
  const records = [
    record('main', 'driver-1', userId, delivered, {
      events: [
        {
          type: 'brake',
          startTime: new Date(START + 200_000).toISOString(),
          endTime: new Date(START + 203_000).toISOString(),
          startPoint: { lat: main[200]!.lat, lng: main[200]!.lng },
          endPoint: { lat: main[203]!.lat, lng: main[203]!.lng },
        },
      ],
    }),
    record('gcj', 'driver-1', userId, gcj, { coordinate: 'GCJ02' }),
    record('old', 'driver-1', userId, old),
    record('one-point', 'driver-1', userId, [main[0]!, { ...main[1]!, lat: 99 }], {
      startTime: new Date(START).toISOString(),
      endTime: new Date(START + 60_000).toISOString(),
    }),
    record('leaver-trip', 'leaver', leaverId, wavy(300, START + 7_200_000)),
  ];
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), records)], now: clock });
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  base = await api.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await api?.close();
  ws?.cleanup();
});

describe('trip route', () => {
  it('tolerance=0 gives every kept point in time order, without the dropped ones, each with its time and speed', async () => {
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/main/route?tolerance=0');
    expect(status).toBe(200);
    expect(body).toMatchObject({ appId: ws.appId, userId, orgUserId: 'driver-1', tripId: 'main' });
    const route = body['route'];
    expect(route.type).toBe('Feature');
    expect(route.geometry.type).toBe('LineString');
    expect(route.geometry.coordinates).toEqual(keptMain.map((p) => [p.lng, p.lat]));
    expect(route.properties.times).toEqual(keptMain.map((p) => p.t));
    expect(route.properties.speedsInKmh).toEqual(keptMain.map((p) => Math.round(p.speed * 3.6 * 100) / 100));
    expect(route.properties).toMatchObject({
      tripId: 'main',
      coordinate: 'WGS84',
      tolerance: 0,
      keptPointCount: 900,
      startTime: '2026-11-20 07:00:00',
    });
    // the spike, the repeated time's second point, the out-of-range and negative-speed points are absent
    const lats = route.geometry.coordinates.map((c: number[]) => c[1]);
    expect(lats).not.toContain(delivered[100]!.lat);
    expect(lats).not.toContain(main[300]!.lat + 0.001);
    expect(lats).not.toContain(95);
    expect(lats).not.toContain(52.6);
  });

  it('simplifies by Douglas–Peucker in metres: equal to an independent implementation, every dropped point within tolerance', async () => {
    const xy = projectRef(keptMain);
    let previous = keptMain.length;
    for (const tolerance of [1, 5, 20, 250]) {
      const query = tolerance === 5 ? '' : `?tolerance=${tolerance}`;
      const { status, body } = await routeOf(`/v1/org-user/driver-1/trip/main/route${query}`);
      expect(status).toBe(200);
      const coords = body['route'].geometry.coordinates as [number, number][];
      const expected = referenceDp(keptMain, tolerance);
      expect(coords, `tolerance ${tolerance}`).toEqual(expected.map((i) => [keptMain[i]!.lng, keptMain[i]!.lat]));
      expect(body['route'].properties.times).toEqual(expected.map((i) => keptMain[i]!.t));
      expect(body['route'].properties.tolerance).toBe(tolerance);
      // brute force: every point between two consecutive kept ones is within tolerance of their segment
      for (let k = 0; k + 1 < expected.length; k++) {
        const a = expected[k]!,
          b = expected[k + 1]!;
        for (let i = a + 1; i < b; i++) expect(distToSegment(xy[i]!, xy[a]!, xy[b]!)).toBeLessThanOrEqual(tolerance);
      }
      expect(expected[0]).toBe(0);
      expect(expected[expected.length - 1]).toBe(keptMain.length - 1);
      // the shape is not trivial: something is dropped, and more with a larger tolerance
      expect(coords.length).toBeLessThan(previous);
      if (tolerance <= 20) expect(coords.length).toBeGreaterThan(2);
      previous = coords.length;
    }
  });

  it('returns the events as a FeatureCollection', async () => {
    const { body } = await routeOf('/v1/org-user/driver-1/trip/main/route');
    expect(body['events']).toEqual({
      type: 'FeatureCollection',
      features: [
        {
          type: 'Feature',
          geometry: {
            type: 'MultiPoint',
            coordinates: [
              [main[200]!.lng, main[200]!.lat],
              [main[203]!.lng, main[203]!.lat],
            ],
          },
          properties: {
            type: 'brake',
            description: 'Hard braking',
            startTime: '2026-11-20 07:03:20',
            endTime: '2026-11-20 07:03:23',
          },
        },
      ],
    });
  });

  it('returns GCJ02 positions as delivered and says so', async () => {
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/gcj/route?tolerance=0');
    expect(status).toBe(200);
    expect(body['route'].properties.coordinate).toBe('GCJ02');
    expect(body['route'].geometry.coordinates).toEqual(wavy(120, START + 3_600_000).map((p) => [p.lng, p.lat]));
  });

  it('a trip with one kept point is a Point', async () => {
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/one-point/route');
    expect(status).toBe(200);
    expect(body['route'].geometry).toEqual({ type: 'Point', coordinates: [main[0]!.lng, main[0]!.lat] });
    expect(body['route'].properties.times).toEqual([main[0]!.t]);
  });

  it('answers routes requested at the same time each with its own points (reads share one buffer)', async () => {
    const paths = [
      'main/route?tolerance=0',
      'gcj/route?tolerance=0',
      'one-point/route',
      'main/route',
      'gcj/route?tolerance=1',
    ].map((p) => `/v1/org-user/driver-1/trip/${p}`);
    const alone: string[] = [];
    for (const path of paths) alone.push(JSON.stringify((await routeOf(path)).body));
    // connections opened first, then every request written in one tick: the server reads them in
    // one turn of its loop, so their handlers interleave
    const { port } = new URL(base);
    const sockets = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(Number(port), '127.0.0.1', () => resolve(socket)).on('error', reject);
          }),
      ),
    );
    const answers = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          const chunks: Buffer[] = [];
          socket
            .on('data', (c: Buffer) => chunks.push(c))
            .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        }),
    );
    sockets.forEach((socket, i) =>
      socket.write(
        `GET ${paths[i % paths.length]} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
      ),
    );
    const bodies = (await Promise.all(answers)).map((raw) =>
      JSON.stringify(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))),
    );
    bodies.forEach((body, i) => expect(body, paths[i % paths.length]).toBe(alone[i % paths.length]));
  });

  it('serves the copy of a re-sent trip even when it kept no point, never the earlier copy of the same day', async () => {
    const again = wavy(120, START + 5_400_000);
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'resend-1.ndjson'), [record('resent', 'driver-1', userId, again)])],
      now: clock,
    });
    await api.ctx.snapshots.refresh();
    expect(
      (await routeOf('/v1/org-user/driver-1/trip/resent/route?tolerance=0')).body['route'].properties.keptPointCount,
    ).toBe(121);
    // the same trip again, every point out of range: the newer version lists it without points
    const none = again.map((p) => ({ ...p, lat: 95 }));
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'resend-2.ndjson'), [record('resent', 'driver-1', userId, none)])],
      now: clock,
    });
    await api.ctx.snapshots.refresh();
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/resent/route?tolerance=0');
    expect(status).toBe(200);
    expect(body['route'].properties.keptPointCount).toBe(0);
    expect(body['route'].geometry).toBeNull();
  });

  it('is written by the load from its staged points: the bytes the publish writes from the raw-point Parquet', async () => {
    const late = wavy(200, START + 9_000_000);
    const loaded = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'late.ndjson'), [record('late', 'driver-1', userId, late)])],
      now: clock,
    });
    const version = loaded.files[0]!.version as number;
    expect(existsSync(join(ws.paths.routesDir, 'trip_date=2026-11-20', `v${version}.route`))).toBe(true);
    // the load wrote it: its publish had nothing left to write, nor to read (it is recorded as written)
    expect(loaded.publish?.routesWritten).toBe(0);
    expect(loaded.publish?.routesRead).toBe(0);
    // every route file so far (spikes, repeated times, a trip without points, re-sent trips) as the
    // publish writes it from the Parquet the same loads wrote
    const fromParquet = join(ws.dir, 'routes-from-parquet');
    const routesFromParquet = async (routesDir: string) => {
      // read-write: a route file's drivers are entered in the warehouse's index before it is written
      const db = await openDatabase(ws.paths.warehouseFile, { readOnly: false });
      try {
        await writeRoutes(db.connection, { ...routeOptions(ws.paths, 30, clock), routesDir });
      } finally {
        db.close();
      }
    };
    await routesFromParquet(fromParquet);
    const relative = (dir: string) =>
      filesUnder(dir)
        .map((f) => f.slice(dir.length))
        .sort();
    // the publish writes the versions that still own trips (the first copy of the re-sent trip,
    // v2, owns none now: its file was written when it did)
    expect(relative(fromParquet).length).toBeGreaterThanOrEqual(2);
    expect(relative(ws.paths.routesDir)).toEqual(expect.arrayContaining(relative(fromParquet)));
    for (const name of relative(fromParquet)) {
      expect(readFileSync(join(ws.paths.routesDir, name)).equals(readFileSync(join(fromParquet, name))), name).toBe(
        true,
      );
    }

    // the raw points are Parquet format 2; the format-1 files of a warehouse written before give
    // the same routes
    const pointFiles = filesUnder(ws.paths.pointsDir).filter((f) => f.endsWith('.parquet'));
    const formatOf = async (c: Awaited<ReturnType<typeof openDatabase>>['connection'], file: string) =>
      String(
        (await c.runAndReadAll(`select format_version from parquet_file_metadata('${file}')`)).getRowsJson()[0]?.[0],
      );
    const mem = await openDatabase(':memory:');
    try {
      for (const file of pointFiles) {
        expect(await formatOf(mem.connection, file), file).toBe('2');
        await mem.connection.run(
          `copy (select * from read_parquet('${file}')) to '${file}.v1' (format parquet, compression zstd, parquet_version v1)`,
        );
        renameSync(`${file}.v1`, file);
        expect(await formatOf(mem.connection, file), file).toBe('1');
      }
    } finally {
      mem.close();
    }
    const fromFormat1 = join(ws.dir, 'routes-from-format-1');
    await routesFromParquet(fromFormat1);
    expect(relative(fromFormat1)).toEqual(relative(fromParquet));
    for (const name of relative(fromFormat1)) {
      expect(readFileSync(join(fromFormat1, name)).equals(readFileSync(join(fromParquet, name))), name).toBe(true);
    }
  });

  it('leaves a route file the load could not write to the publish, and says so', async () => {
    const db = await openDatabase(ws.paths.warehouseFile, { readOnly: true });
    const [row] = (
      await db.connection.runAndReadAll("select value from meta where key = 'version'")
    ).getRowObjectsJson();
    db.close();
    const next = Number(row?.['value']) + 1;
    // a folder where the first file's route file is written to first: that write fails
    const blocker = join(ws.paths.routesDir, 'trip_date=2026-11-20', `v${next}.route.tmp`);
    const inputs = ['deferred-a', 'deferred-b'].map((id, i) =>
      writeNdjson(join(ws.dir, 'in', `${id}.ndjson`), [
        record(id, 'driver-1', userId, wavy(150, START + 10_000_000 + i * 400_000)),
      ]),
    );
    const loaded = await runLoad({
      dataDir: ws.dir,
      inputs,
      now: clock,
      concurrency: 1,
      afterStage: (file) =>
        file.endsWith('deferred-a.ndjson')
          ? mkdirSync(blocker, { recursive: true })
          : rmSync(blocker, { recursive: true, force: true }),
    });
    expect(loaded.files.map((f) => f.failed)).toEqual([undefined, undefined]);
    expect(loaded.files[0]!.routesDeferred).toMatch(/EISDIR|directory/i);
    expect(loaded.files[1]!.routesDeferred).toBeUndefined();
    // the publish wrote it from the Parquet, and the route is served
    expect(loaded.publish?.routesWritten).toBe(1);
    await api.ctx.snapshots.refresh();
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/deferred-a/route?tolerance=0');
    expect(status).toBe(200);
    expect(body['route'].properties.keptPointCount).toBe(151);
  });

  it('answers 404 route_not_available for a trip whose raw points are past retention', async () => {
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/old/route');
    expect(status).toBe(404);
    expect(body['error']).toBe('route_not_available');
    expect(body['message']).toContain('no longer available');
    // the trip itself is still served
    expect((await get('/v1/org-user/driver-1/trip/old')).status).toBe(200);
  });

  it('is scoped to the calling app and the user', async () => {
    expect((await routeOf('/v1/org-user/driver-1/trip/main/route', otherKey)).body['error']).toBe('user_not_found');
    expect((await routeOf('/v1/org-user/nobody/trip/main/route')).body['error']).toBe('user_not_found');
    const other = await routeOf('/v1/org-user/driver-1/trip/leaver-trip/route');
    expect(other.status).toBe(404);
    expect(other.body['error']).toBe('trip_not_found');
    expect((await get('/v1/org-user/driver-1/trip/main/route', 'dk_wrong')).status).toBe(401);
  });

  it('answers 400 naming tolerance for a bad value', async () => {
    for (const bad of ['-1', '1000.5', 'abc', '', 'NaN', '1e9', '2.', '.5', '2.5e0', '+2.5', '0x10']) {
      const { status, body } = await routeOf(`/v1/org-user/driver-1/trip/main/route?tolerance=${bad}`);
      expect(status, bad).toBe(400);
      expect(body['error']).toBe('invalid_parameter');
      expect(body['message']).toMatch(/^tolerance/);
    }
    const { status } = await routeOf('/v1/org-user/driver-1/trip/main/route?tolerance=1000');
    expect(status).toBe(200);
  });

  it('takes a tolerance with decimals and simplifies at exactly that tolerance', async () => {
    for (const tolerance of [2.5, 0.75, 999.999]) {
      const { status, body } = await routeOf(`/v1/org-user/driver-1/trip/main/route?tolerance=${tolerance}`);
      expect(status, String(tolerance)).toBe(200);
      expect(body['route'].properties.tolerance).toBe(tolerance);
      expect(body['route'].properties.times).toEqual(referenceDp(keptMain, tolerance).map((i) => keptMain[i]!.t));
    }
  });

  it('is in the OpenAPI document with an example', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Record<string, any>;
    const op = doc['paths']['/v1/org-user/{org_user_id}/trip/{trip_id}/route']['get'];
    expect(op).toMatchObject({ operationId: 'getTripRoute', tags: ['Trips'] });
    expect(op.parameters.map((p: any) => p.name)).toEqual(['org_user_id', 'trip_id', 'tolerance']);
    for (const p of op.parameters) expect(p.description).toBeTruthy();
    expect(op.responses['200'].content['application/json'].schema.examples).toHaveLength(1);
  });
});

describe('trip route over time', () => {
  it('goes with the user on deletion: 404 at once, and the purge removes it from every route file', async () => {
    expect((await routeOf('/v1/org-user/leaver/trip/leaver-trip/route')).status).toBe(200);
    const routeFiles = () => filesUnder(ws.paths.routesDir);
    expect(Buffer.concat(routeFiles().map((f) => readFileSync(f))).includes('leaver-trip')).toBe(true);
    const deleted = await fetch(`${base}/v1/org-user/leaver`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(deleted.status).toBe(200);
    expect((await routeOf('/v1/org-user/leaver/trip/leaver-trip/route')).body['error']).toBe('user_not_found');
    const purged = await runLoad({ dataDir: ws.dir, now: clock });
    expect(purged.purged.routeFilesRewritten).toBe(1);
    const bytes = Buffer.concat(routeFiles().map((f) => readFileSync(f)));
    expect(bytes.includes('leaver-trip')).toBe(false);
    expect(bytes.includes('main')).toBe(true);
    for (const file of routeFiles()) expect(readRoute(file, ws.appId, 'leaver-trip')).toBeNull();
    // the other user's route is untouched
    expect((await routeOf('/v1/org-user/driver-1/trip/main/route?tolerance=0')).body['route'].properties.times).toEqual(
      keptMain.map((p) => p.t),
    );
  });

  it('answers route_not_available once retention has removed the raw points', async () => {
    const later = new Date(clock.getTime() + 40 * 86_400_000);
    await runLoad({ dataDir: ws.dir, now: later });
    expect(filesUnder(ws.paths.routesDir)).toEqual([]);
    const { status, body } = await routeOf('/v1/org-user/driver-1/trip/main/route');
    expect(status).toBe(404);
    expect(body['error']).toBe('route_not_available');
  });
});
