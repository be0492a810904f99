import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { AppStore } from '../src/apps/store.js';
import { PassportStore } from '../src/passport/store.js';
import { DEFAULT_LIMITS } from '../src/api/http/limits.js';
import { addDays } from '../src/time.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { ensureBase } from './fixtures.js';
import { historySnapshot } from './score-stage.js';
import { startApiServer } from './api-server.js';
import { runGenerator } from './generate-run.js';
import { oneHourTrip } from './route-stage.js';
import type { LoadGeneratorResult } from './load-generator.js';

/** Fair share (docs/api-limits.md, "Cost of a request"): another app's p99 within 2x its p99 on an idle server. */
const MAX_RATIO = 2;
/** The other app's steady, light traffic. */
const OTHER_RATE = 100;
/** What the flooding app sends: more than its limit admits (about 111 a second of this mix), so the limit decides. */
const FLOOD_RATE = 150;
const ROUTE_TRIPS = 100;
const OTHER_DRIVERS = 20;

/**
 * Fair share: on the api stage's scored history, one app floods with the costliest requests it
 * may send (a year of score history, routes of one-hour trips, pages of 100 trips) while another
 * app asks light ones (trip detail, its trip list) at 100 a second; the other app's p99 idle and
 * during, with the default limits and with limits as they were (2,000 requests a second per key,
 * every request alike, no cap in flight).
 */
export async function benchFairshare(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const snapshot = await historySnapshot(ctx);
  const dir = snapshot.dir;
  if (!snapshot.scored) {
    const run = await runNodeChild(
      'score (fairshare setup)',
      jobScript(ctx, 'score'),
      ['--data-dir', dir, '--date', ctx.scoreDate, '--json'],
      childOptions(ctx),
    );
    ctx.children.push(run);
    jobJson(run);
    snapshot.scored = true;
  }
  const paths = pathsFor(dir);
  const other = await new AppStore(paths.appsFile).add({ name: 'Bench Other', timeZone: base.timeZone });
  const otherIds = Array.from({ length: OTHER_DRIVERS }, (_, i) => `other-${i}`);
  const passport = await PassportStore.open(paths.passportFile);
  let accounts: Map<string, number>;
  try {
    accounts = await passport.ensureAccounts(other.appId, otherIds);
  } finally {
    passport.close();
  }
  const flooders = base.users.slice(0, ROUTE_TRIPS);
  const input = join(dir, 'in', 'fairshare.ndjson');
  mkdirSync(join(dir, 'in'), { recursive: true });
  writeFileSync(
    input,
    [
      ...flooders.map((u, i) => oneHourTrip(base.appId, u.orgUserId, u.platformUserId, `fair-${i}`, ctx.day, i)),
      ...otherIds.map((id, i) => oneHourTrip(other.appId, id, accounts.get(id) as number, `other-${i}`, ctx.day, i)),
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const load = await runNodeChild(
    'load (fairshare setup)',
    jobScript(ctx, 'load'),
    ['--data-dir', dir, '--input', input, '--json'],
    childOptions(ctx),
  );
  ctx.children.push(load);
  jobJson(load);

  const user = (id: string): string => `/v1/org-user/${encodeURIComponent(id)}`;
  const flood: string[] = [];
  flooders.forEach((u, i) =>
    flood.push(
      `${user(u.orgUserId)}/safety-score/history?interval=${i % 2 === 0 ? 30 : 90}&startTime=${addDays(ctx.day, -365)}&endTime=${ctx.day}`,
      `${user(u.orgUserId)}/trip/fair-${i}/route`,
      `${user(u.orgUserId)}/trips?limit=100`,
    ),
  );
  const light = otherIds.flatMap((id, i) => [`${user(id)}/trip/other-${i}`, `${user(id)}/trips`]);
  const seconds = ctx.options.sizes.apiSeconds;
  const run = (url: string, apiKey: string, list: string[], rate: number, name: string): Promise<LoadGeneratorResult> =>
    runGenerator(ctx, { url, apiKey, paths: list, rate, seconds, connections: 50, warmupSeconds: 2 }, name);
  const ms = (r: LoadGeneratorResult): string => `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms`;
  const codes = (r: LoadGeneratorResult): string =>
    Object.entries(r.statusCodes)
      .map(([code, n]) => `${n} × ${code}`)
      .join(', ');

  const setups = [
    ['default limits', {}],
    [
      'limits without request cost (2,000/s, no cap in flight)',
      {
        DRIVING_API_RATE_PER_APP: '2000',
        DRIVING_API_MAX_IN_FLIGHT_PER_APP: '0',
        DRIVING_API_ROUTE_WORK_CONCURRENT: '1000',
      },
    ],
  ] as const;
  for (const [label, env] of setups) {
    const server = await startApiServer(ctx, dir, { env });
    try {
      for (const path of [...flood.slice(0, 3), ...light.slice(0, 2)]) {
        const key = light.includes(path) ? other.apiKey : base.apiKey;
        const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        if (res.status !== 200)
          throw new Error(`GET ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      }
      const idle = await run(server.url, other.apiKey, light, OTHER_RATE, 'other');
      const [during, flooding] = await Promise.all([
        run(server.url, other.apiKey, light, OTHER_RATE, 'other'),
        run(server.url, base.apiKey, flood, FLOOD_RATE, 'flood'),
      ]);
      const failed = during.errors + during.timeouts + during.non2xx;
      record(ctx, {
        stage: 'fairshare',
        metric: `${label}: other app, light requests @ ${OTHER_RATE}/s, idle server: p50 / p99`,
        value: ms(idle),
        unit: '',
      });
      record(ctx, {
        stage: 'fairshare',
        metric: `${label}: other app @ ${OTHER_RATE}/s while one app floods: p50 / p99 (failed)`,
        value: `${ms(during)} (${failed})`,
        unit: '',
        ...(label === 'default limits'
          ? {
              target: `p99 <= ${MAX_RATIO}x idle, 0 failed`,
              met: during.p99Ms <= MAX_RATIO * idle.p99Ms && failed === 0,
            }
          : {}),
      });
      record(ctx, {
        stage: 'fairshare',
        metric: `${label}: flooding app @ ${FLOOD_RATE}/s (history of 366 days, routes, pages of 100 in turn): answers / p99`,
        value: `${codes(flooding)} / ${flooding.p99Ms.toFixed(1)} ms`,
        unit: '',
      });
    } finally {
      ctx.children.push(await server.stop());
    }
  }
  record(ctx, {
    stage: 'fairshare',
    metric: 'app limit (default)',
    value: `${DEFAULT_LIMITS.ratePerApp} cost units per ${DEFAULT_LIMITS.appRateWindowMs} ms, ${DEFAULT_LIMITS.maxInFlightPerApp} in flight`,
    unit: '',
  });
}
