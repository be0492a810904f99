import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Simplification } from '../src/geo/douglas-peucker.js';
import { DEFAULT_LIMITS } from '../src/api/http/limits.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { dropDataDir, ensureBase, newDataDir } from './fixtures.js';
import { startApiServer } from './api-server.js';
import { runGenerator } from './generate-run.js';
import { zigzag } from './zigzag.js';

/** Target: the event loop is never held for more than 50 ms (docs/decisions.md, Statistics and scores): /healthz p99 below that during the routes. */
const MAX_HEALTHZ_P99_MS = 50;
const HEALTHZ_RATE = 200;
const SIZES = [60_000, 100_000] as const;

/**
 * Zigzag: the worst case of Douglas–Peucker (n²/2 distance evaluations, bench/zigzag.ts) as
 * trips of 60,000 and 100,000 points, loaded by the real load job and asked for through the real
 * `serve.js` with its default limits, at the default tolerance and with every point, back to back,
 * while a load generator asks `/healthz` at 200 requests/s. Before that, the same simplification
 * run in one go in this process: what the route held the event loop for when it ran so.
 */
export async function benchZigzag(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const dir = await newDataDir(ctx, 'zigzag');
  try {
    const user = base.users[0] as { orgUserId: string; platformUserId: number };
    const start = Date.parse(`${ctx.day}T00:30:00Z`);
    const trips = SIZES.map((n, i) => ({ n, tripId: `zigzag-${n}`, points: zigzag(n, start - i * 2 * 86_400_000) }));

    const first = trips[0] as (typeof trips)[number];
    const dp = new Simplification(
      first.points.map((p) => p.lat),
      first.points.map((p) => p.lng),
      5,
    );
    const t0 = performance.now();
    dp.run(Infinity);
    record(ctx, {
      stage: 'zigzag',
      metric: `reference: the simplification of the ${first.n.toLocaleString('en-US')}-point zig-zag at 5 m in one go (the event loop held that long): time / distance evaluations / kept`,
      value: `${((performance.now() - t0) / 1000).toFixed(1)} s / ${dp.evaluations.toLocaleString('en-US')} / ${dp.indexes().length.toLocaleString('en-US')}`,
      unit: '',
    });

    const input = join(dir, 'in', 'zigzag.ndjson');
    mkdirSync(join(dir, 'in'), { recursive: true });
    writeFileSync(
      input,
      trips
        .map((t) =>
          JSON.stringify({
            appId: base.appId,
            platformUserId: user.platformUserId,
            orgUserId: user.orgUserId,
            tripId: t.tripId,
            os: 'android',
            startTime: new Date(t.points[0]!.t).toISOString(),
            endTime: new Date(t.points[t.n - 1]!.t).toISOString(),
            points: t.points,
          }),
        )
        .join('\n') + '\n',
    );
    const load = await runNodeChild(
      'load (zigzag setup)',
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--input', input, '--json'],
      childOptions(ctx),
    );
    ctx.children.push(load);
    jobJson(load);

    const server = await startApiServer(ctx, dir);
    try {
      const healthz = {
        url: server.url,
        apiKey: base.apiKey,
        paths: ['/healthz'],
        rate: HEALTHZ_RATE,
        seconds: ctx.options.sizes.apiSeconds,
        connections: 20,
        warmupSeconds: 1,
      };
      const idle = await runGenerator(ctx, healthz, 'healthz');
      record(ctx, {
        stage: 'zigzag',
        metric: `/healthz @ ${HEALTHZ_RATE}/s, idle: p50 / p99 / max`,
        value: `${idle.p50Ms.toFixed(2)} / ${idle.p99Ms.toFixed(2)} / ${idle.maxMs.toFixed(1)} ms`,
        unit: '',
      });

      const ask = async (
        path: string,
      ): Promise<{ status: number; ms: number; bytes: number; positions: number | null }> => {
        const t = performance.now();
        const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${base.apiKey}` } });
        const body = await res.text();
        const ms = performance.now() - t;
        const positions =
          res.status === 200
            ? (JSON.parse(body) as { route: { properties: { times: unknown[] } } }).route.properties.times.length
            : null;
        return { status: res.status, ms, bytes: body.length, positions };
      };
      const paths = trips.flatMap(
        (t) =>
          [
            [
              `${t.n.toLocaleString('en-US')} points, tolerance 5 m (default)`,
              `/v1/org-user/${encodeURIComponent(user.orgUserId)}/trip/${t.tripId}/route`,
            ],
            [
              `${t.n.toLocaleString('en-US')} points, tolerance=0 (every point)`,
              `/v1/org-user/${encodeURIComponent(user.orgUserId)}/trip/${t.tripId}/route?tolerance=0`,
            ],
          ] as const,
      );
      // the routes back to back for as long as the generator asks /healthz
      const during = runGenerator(ctx, healthz, 'healthz');
      let running = true;
      void during.finally(() => (running = false));
      const seen = new Map<string, { status: number; ms: number[]; bytes: number; positions: number | null }>();
      await new Promise((r) => setTimeout(r, 1_000));
      while (running) {
        for (const [label, path] of paths) {
          if (!running && seen.has(label)) break;
          const r = await ask(path);
          const entry = seen.get(label) ?? { status: r.status, ms: [], bytes: r.bytes, positions: r.positions };
          entry.ms.push(r.ms);
          seen.set(label, entry);
        }
      }
      const loaded = await during;
      for (const [label, e] of seen) {
        record(ctx, {
          stage: 'zigzag',
          metric: `route of the zig-zag, ${label}: status / time to answer (first, max of ${e.ms.length}) / answer`,
          value: `${e.status} / ${e.ms[0]!.toFixed(0)}, ${Math.max(...e.ms).toFixed(0)} ms / ${e.positions === null ? `${e.bytes} B` : `${e.positions.toLocaleString('en-US')} positions, ${(e.bytes / 1e6).toFixed(1)} MB`}`,
          unit: '',
        });
      }
      const failed = loaded.errors + loaded.timeouts + loaded.non2xx;
      record(ctx, {
        stage: 'zigzag',
        metric: `/healthz @ ${HEALTHZ_RATE}/s while the routes are asked back to back: p50 / p99 / max (budget ${DEFAULT_LIMITS.routeWorkBudget.toLocaleString('en-US')} evaluations, slice ${DEFAULT_LIMITS.routeWorkSlice.toLocaleString('en-US')})`,
        value: `${loaded.p50Ms.toFixed(2)} / ${loaded.p99Ms.toFixed(2)} / ${loaded.maxMs.toFixed(1)} ms`,
        unit: '',
        target: `p99 < ${MAX_HEALTHZ_P99_MS} ms, 0 failed`,
        met: loaded.p99Ms < MAX_HEALTHZ_P99_MS && failed === 0,
      });
    } finally {
      ctx.children.push(await server.stop());
    }
  } finally {
    dropDataDir(ctx, dir);
  }
}
