// Shared harness of the cells' tests (test/cells/): jobs of a cell as real processes, the state
// copied into a one-warehouse reference, and the comparison of the API's answers route for route.
import { expect } from 'vitest';
import pg from 'pg';
import { pathsFor } from '../../src/data-folder.js';
import { runJobProcess } from './job-process.js';
import { startServe, until, type ServeProcess } from './serve-process.js';
import { publishedRows } from './workspace.js';

/** What differs between two machines answering alike: the request's own id, a cursor (sealed with each machine's own key) and when each score run ran. */
const UNSHARED = new Set(['requestId', 'nextCursor', 'evaluationTime']);
export const RANGE = 'startTime=2026-11-01&endTime=2026-11-30';

/** `node jobs/<name>.js --data-dir DIR ARGS` with DATABASE_URL `db`; its stderr, or an error naming its exit. */
export async function cellJob(name: string, dataDir: string, db: string, ...args: string[]): Promise<string> {
  const ran = await runJobProcess(name, ['--data-dir', dataDir, ...args], {
    DATABASE_URL: db,
    DRIVING_LOAD_CONCURRENCY: '1',
  });
  if (ran.code !== 0) throw new Error(`${name} ${args.join(' ')} exited ${ran.code}: ${ran.stderr.slice(-3000)}`);
  return ran.stderr;
}

/** A GET's status and body, without what differs between machines. */
export async function answer(base: string, apiKey: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body: JSON.parse(JSON.stringify(body, (k, v) => (UNSHARED.has(k) ? undefined : v))) };
}

/** Every page of a driver's trips: their ids, newest first. */
export async function allTrips(base: string, apiKey: string, driver: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '';
  for (;;) {
    const res = await fetch(
      `${base}/v1/org-user/${driver}/trips?${RANGE}&limit=50${cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : ''}`,
      { headers: { authorization: `Bearer ${apiKey}` } },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { trips: { tripId: string }[]; nextCursor?: string | null };
    ids.push(...body.trips.map((t) => t.tripId));
    if (!body.nextCursor) return ids;
    cursor = body.nextCursor;
  }
}

/**
 * Asks `got` and `want` every route for every driver (all pages of trips, statistics of each
 * period, safety scores and their history, three trips with their routes) and expects the same
 * answers; how many paths were compared.
 */
export async function compareEveryRoute(want: string, got: string, apiKey: string, drivers: string[]): Promise<number> {
  let compared = 0;
  for (const driver of drivers) {
    const ids = await allTrips(want, apiKey, driver);
    expect({ driver, ids: await allTrips(got, apiKey, driver) }).toEqual({ driver, ids });
    const paths = [
      `/v1/org-user/${driver}/trips?${RANGE}&limit=50`,
      `/v1/org-user/${driver}/statistics?type=day&${RANGE}`,
      `/v1/org-user/${driver}/statistics?type=week&${RANGE}`,
      `/v1/org-user/${driver}/statistics?type=month&${RANGE}`,
      `/v1/org-user/${driver}/safety-score?interval=30`,
      `/v1/org-user/${driver}/safety-score?interval=90`,
      `/v1/org-user/${driver}/safety-score/history?interval=30&startTime=2026-11-01&endTime=2026-11-30`,
      ...ids.slice(0, 3).flatMap((t) => [`/v1/org-user/${driver}/trip/${t}`, `/v1/org-user/${driver}/trip/${t}/route`]),
    ];
    for (const path of paths) {
      const [a, b] = await Promise.all([answer(want, apiKey, path), answer(got, apiKey, path)]);
      expect({ path, ...b }).toEqual({ path, ...a });
      compared++;
    }
  }
  return compared;
}

/** The published safety scores of data folders together: [user, interval, percentile], in one order. */
export async function percentiles(dirs: string[]): Promise<unknown[][]> {
  const cols = ['version', 'evaluated_at'];
  const order = 'app_id, user_id, evaluation_date, interval_days';
  const rows = (
    await Promise.all(dirs.map((dir) => publishedRows(pathsFor(dir), 'safety_scores', order, cols)))
  ).flat();
  return rows
    .sort(
      (x, y) => Number(x['user_id']) - Number(y['user_id']) || Number(x['interval_days']) - Number(y['interval_days']),
    )
    .map((r) => [r['user_id'], r['interval_days'], r['percentile']]);
}

/** Copies the apps and accounts of the cells' store into the reference's, so both know the same drivers. */
export async function copyState(from: string, to: string): Promise<void> {
  const a = new pg.Client({ connectionString: from });
  const b = new pg.Client({ connectionString: to });
  await a.connect();
  await b.connect();
  try {
    for (const table of ['apps', 'accounts']) {
      const { rows } = await a.query(`select * from ${table}`);
      for (const row of rows) {
        const cols = Object.keys(row);
        await b.query(
          `insert into ${table} (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')}) on conflict do nothing`,
          cols.map((c) => row[c]),
        );
      }
    }
    await b.query("update state_versions set version = version + 1 where name = 'apps'");
  } finally {
    await a.end();
    await b.end();
  }
}

/** The org user ids of an app's accounts, in order. */
export async function accountsOf(url: string, appId: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('select org_user_id from accounts where app_id = $1 order by 1', [appId])).rows.map(
      (r) => r.org_user_id as string,
    );
  } finally {
    await c.end();
  }
}

/** The cell of each of an app's drivers, by org user id. */
export async function cellsOfDrivers(url: string, appId: string): Promise<Map<string, string>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `select a.org_user_id, d.cell from accounts a
         join driver_cells d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
        where a.app_id = $1`,
      [appId],
    );
    return new Map(rows.map((r) => [String(r.org_user_id), String(r.cell)]));
  } finally {
    await c.end();
  }
}

/**
 * An API machine following the given cells (`serve.js --follow NAME=DIR` each, one worker) and one
 * serving the reference warehouse, both on free ports; resolves once the first is ready.
 */
export async function cellsAndReferenceApis(
  apiDir: string,
  cells: Record<string, string>,
  url: string,
  ref: string,
  refUrl: string,
): Promise<{ api: ServeProcess; one: ServeProcess }> {
  const plain = ['--port', '0', '--workers', '1', '--no-metrics'];
  const follows = Object.entries(cells).flatMap(([name, dir]) => ['--follow', `${name}=${dir}`]);
  const api = await startServe(['--data-dir', apiDir, ...plain, ...follows], {
    DATABASE_URL: url,
    DRIVING_FOLLOW_POLL: '200ms',
  });
  const one = await startServe(['--data-dir', ref, ...plain], { DATABASE_URL: refUrl });
  await until(async () => (await fetch(`${api.url}/readyz`)).status === 200, 'the API machine ready', 60_000);
  return { api, one };
}
