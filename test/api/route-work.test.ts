import { describe, expect, it } from 'vitest';
import { Simplification, simplifyIndexes } from '../../src/geo/douglas-peucker.js';
import { routeJson, routeJsonInChunks, type RouteAnswer } from '../../src/api/geometry/route-geojson.js';
import { POSITIONS_PER_CHUNK, RouteWork } from '../../src/api/geometry/route-work.js';
import { ApiError } from '../../src/api/http/errors.js';
import { zigzag, type ZigzagPoint } from '../../bench/zigzag.js';
import {
  isShared,
  readRoute,
  RouteFileWriter,
  SHARED_BLOCK_MAX_POINTS,
  type RoutePoints,
} from '../../src/route/route-file.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The route's work counted, not timed: distance evaluations of Douglas–Peucker, the slices it is
// cut into, the budget that stops it, and the chunks a long answer is written in. Correctness
// against a second, plain recursive implementation that counts its own evaluations.

const R = 6_371_008.8;

/** Plain recursive Douglas–Peucker on its own projection; counts one evaluation per point tested. */
function reference(points: ZigzagPoint[], tol: number): { kept: number[]; evaluations: number } {
  const o = points[0]!;
  const k = Math.cos((o.lat * Math.PI) / 180);
  const xy = points.map(
    (p) => [((p.lng - o.lng) * Math.PI * R * k) / 180, ((p.lat - o.lat) * Math.PI * R) / 180] as const,
  );
  const dist = (i: number, a: number, b: number): number => {
    const [px, py] = xy[i]!,
      [ax, ay] = xy[a]!,
      [bx, by] = xy[b]!;
    const len = (bx - ax) ** 2 + (by - ay) ** 2;
    let u = len === 0 ? 0 : ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / len;
    u = Math.max(0, Math.min(1, u));
    return Math.hypot(px - (ax + u * (bx - ax)), py - (ay + u * (by - ay)));
  };
  const kept = new Set([0, points.length - 1]);
  let evaluations = 0;
  // an explicit stack: the zig-zag recurses once per point
  const stack: [number, number][] = [[0, points.length - 1]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    let best = -1,
      bestD = tol;
    for (let i = a + 1; i < b; i++) {
      evaluations++;
      const d = dist(i, a, b);
      if (d > bestD) {
        bestD = d;
        best = i;
      }
    }
    if (best >= 0) {
      kept.add(best);
      stack.push([a, best], [best, b]);
    }
  }
  return { kept: [...kept].sort((x, y) => x - y), evaluations };
}

const columns = (p: ZigzagPoint[]): RoutePoints => ({
  t: Float64Array.from(p, (x) => x.t),
  lat: Float64Array.from(p, (x) => x.lat),
  lng: Float64Array.from(p, (x) => x.lng),
  speed: Float64Array.from(p, (x) => x.speed),
});

/** A smooth drive: what real trips look like to the simplification. */
const smooth = (n: number): ZigzagPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    t: i * 1000,
    lat: 52.5 + (i * 12) / 111_195,
    lng: 13.4 + 0.0015 * Math.sin(i / 15) + 0.0004 * Math.sin(i / 3.7),
    speed: 12,
  }));

describe('Douglas–Peucker counted', () => {
  it("keeps the reference's points with the reference's count of evaluations; the zig-zag costs n²/2, a smooth trip about n·log n", () => {
    const n = 2000;
    const zz = zigzag(n, 0);
    const dp = new Simplification(
      zz.map((p) => p.lat),
      zz.map((p) => p.lng),
      5,
    );
    expect(dp.run(Infinity)).toBe(true);
    const ref = reference(zz, 5);
    expect(dp.indexes()).toEqual(ref.kept);
    expect(dp.evaluations).toBe(ref.evaluations);
    expect(dp.evaluations).toBeGreaterThan((0.95 * (n * n)) / 2);

    const road = smooth(3601);
    const roadDp = new Simplification(
      road.map((p) => p.lat),
      road.map((p) => p.lng),
      5,
    );
    roadDp.run(Infinity);
    const roadRef = reference(road, 5);
    expect(roadDp.indexes()).toEqual(roadRef.kept);
    expect(roadDp.evaluations).toBe(roadRef.evaluations);
    // a few n·log n: 36 evaluations a point here, where the zig-zag of this length would take 1,800
    expect(roadDp.evaluations).toBeLessThan(4 * 3601 * Math.log2(3601));
  });

  it('gives the same points however the work is cut, and no run spends more than it was given', () => {
    const zz = zigzag(300, 0);
    const whole = simplifyIndexes(
      zz.map((p) => p.lat),
      zz.map((p) => p.lng),
      5,
    );
    for (const slice of [1, 7, 1000, 99_999]) {
      const dp = new Simplification(
        zz.map((p) => p.lat),
        zz.map((p) => p.lng),
        5,
      );
      let runs = 0;
      for (;;) {
        const before = dp.evaluations;
        const done = dp.run(slice);
        if (dp.evaluations - before > slice) throw new Error(`a run of ${slice} spent ${dp.evaluations - before}`);
        runs++;
        // another simplification in between uses the shared working space: a detached one keeps its own
        if (runs === 2) {
          dp.detach();
          simplifyIndexes(
            smooth(500).map((p) => p.lat),
            smooth(500).map((p) => p.lng),
            5,
          );
        }
        if (done) break;
      }
      expect(dp.indexes(), `slice ${slice}`).toEqual(whole);
      expect(runs).toBeGreaterThanOrEqual(Math.ceil(dp.evaluations / slice));
    }
  });
});

describe('route work bounded', () => {
  const answer: RouteAnswer = {
    head: { appId: 'a', userId: 1, orgUserId: 'o', tripId: 't' },
    trip: { trip_id: 't', coordinate: 'WGS84', start_time: 's', end_time: 'e' },
    events: [],
  };
  const limits = {
    routeWorkBudget: 1_000_000,
    routeWorkSlice: 10_000,
    routeWorkConcurrent: 1,
    overloadRetryAfterSeconds: 3,
  };

  it('yields to the event loop every slice and answers exactly the simplification', async () => {
    const zz = zigzag(1200, 0);
    const points = columns(zz);
    let pauses = 0;
    const work = new RouteWork(limits, async () => {
      pauses++;
    });
    const body = await work.render(answer, points, 5);
    const ref = reference(zz, 5);
    expect(body).toBe(routeJson(answer, points, ref.kept, 5));
    // one pause per slice after the first
    expect(pauses).toBe(Math.ceil(ref.evaluations / limits.routeWorkSlice) - 1);
    expect(work.pending).toBe(0);
  });

  it('answers 503 busy with Retry-After once the budget is spent: counted, the same every time', async () => {
    const zz = zigzag(1600, 0);
    expect(reference(zz, 5).evaluations).toBeGreaterThan(limits.routeWorkBudget);
    for (let attempt = 0; attempt < 2; attempt++) {
      let pauses = 0;
      const work = new RouteWork(limits, async () => {
        pauses++;
      });
      const error = await work.render(answer, columns(zz), 5).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).error).toBe('busy');
      expect((error as ApiError).status).toBe(503);
      expect((error as ApiError).headers).toEqual({ 'retry-after': '3' });
      expect((error as ApiError).message).toMatch(/tolerance=0/);
      expect(pauses).toBe(limits.routeWorkBudget / limits.routeWorkSlice - 1);
      expect(work.pending).toBe(0);
    }
    // tolerance 0 needs no simplification: every point, written in chunks
    const body = await new RouteWork(limits, async () => {}).render(answer, columns(zz), 0);
    expect(JSON.parse(String(body)).route.properties.times).toHaveLength(1600);
  });

  it('takes no more long routes at once than allowed: the next is 503 busy at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = new RouteWork(limits, () => gate);
    const first = work.render(answer, columns(zigzag(400, 0)), 5);
    expect(work.pending).toBe(1);
    const second = await work.render(answer, columns(zigzag(400, 0)), 5).catch((e: unknown) => e);
    expect((second as ApiError).error).toBe('busy');
    // a short route is answered in its own turn without a place
    expect(JSON.parse(String(await work.render(answer, columns(smooth(300)), 5))).tripId).toBe('t');
    release();
    expect(JSON.parse(String(await first)).route.properties.times.length).toBe(
      reference(zigzag(400, 0), 5).kept.length,
    );
    expect(work.pending).toBe(0);
  });

  it('writes a long answer in chunks, byte for byte the JSON of the whole', async () => {
    const n = 3 * POSITIONS_PER_CHUNK + 17;
    const points = columns(smooth(n));
    const kept = Array.from({ length: n }, (_, i) => i);
    const odd = {
      ...answer,
      head: { ...answer.head, tripId: 'quote " and \u0000 NUL' },
      events: [
        {
          type: 'brake',
          description: 'x',
          start_time: 'a',
          end_time: 'b',
          start_lat: 1,
          start_lng: 2,
          end_lat: 3,
          end_lng: 4,
        },
      ],
    };
    let pauses = 0;
    const chunked = await routeJsonInChunks(odd, points, kept, 0, POSITIONS_PER_CHUNK, async () => {
      pauses++;
    });
    expect(Buffer.concat(chunked).toString('utf8')).toBe(routeJson(odd, points, kept, 0));
    expect(pauses).toBe(3 * Math.ceil(n / POSITIONS_PER_CHUNK) - 1);
    // no piece holds more than one chunk of positions
    expect(Math.max(...chunked.map((b) => b.length))).toBeLessThan(routeJson(odd, points, kept, 0).length / 3);
  });
});

describe('route reads for long routes', () => {
  it('reads a trip longer than the shared block into its own, which the next read leaves alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-work-'));
    try {
      const long = zigzag(SHARED_BLOCK_MAX_POINTS + 1, 0);
      const short = smooth(100);
      const writer = new RouteFileWriter(join(dir, 'v1.route.tmp'));
      writer.add('a', 'long', columns(long));
      writer.add('a', 'short', columns(short));
      writer.finish(join(dir, 'v1.route'));
      const first = readRoute(join(dir, 'v1.route'), 'a', 'long')!;
      expect(isShared(first)).toBe(false);
      const second = readRoute(join(dir, 'v1.route'), 'a', 'short')!;
      expect(isShared(second)).toBe(true);
      readRoute(join(dir, 'v1.route'), 'a', 'long');
      expect(Array.from(first.lat)).toEqual(long.map((p) => p.lat));
      expect(Array.from(second.t)).toEqual(short.map((p) => p.t));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
