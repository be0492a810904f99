// The real server on a loopback port over a generated dataset: paging returns exactly the stored
// trips, statistics equal the listed trips' sums, tripCount equals the listed normal trips in the
// window, and publishes in the middle of a stream of concurrent requests fail none of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { manifestOf, warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';
import { oneFile } from '../helpers/one-file.js';

const ROOT = join(import.meta.dirname, '..', '..');
let ws: Workspace;
let server: ChildProcess;
let base = '';
let key = '';
let laterDays: string[] = [];
const now = new Date();

async function call(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  // 8 days, not 12: users' trips still take several pages of 7 (asserted below), which is what
  // the paging is checked on; more days only made the generate and the load longer
  await runGenerate({ dataDir: ws.dir, users: 6, days: 8, seed: 3, now });
  // the days as one file: what is tested here does not depend on the days coming in separate files
  oneFile(ws.paths.landingDir);
  await runLoad({ dataDir: ws.dir, now });
  await runScore({ dataDir: ws.dir, now });
  // later days for the publish test, generated now: the running API will own the passport store
  // (one run for the three days: each run of the generator costs about a second of CPU whatever its size)
  const later = await runGenerate({
    dataDir: ws.dir,
    users: 6,
    days: 3,
    seed: 101,
    now,
    endDate: '2026-01-03',
    out: join(ws.dir, 'later'),
  });
  laterDays = later.files.filter((f) => f.endsWith('.ndjson')).sort();
  server = spawn(
    process.execPath,
    ['jobs/serve.js', '--data-dir', ws.dir, '--port', '0', '--workers', '1', '--log', 'false'],
    { cwd: ROOT },
  );
  base = await new Promise<string>((resolve, reject) => {
    let err = '';
    server.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1] as string);
    });
    server.on('exit', () => reject(new Error(`server exited: ${err}`)));
  });
});
afterAll(() => {
  server?.kill('SIGTERM');
  ws?.cleanup();
});

describe('end to end over HTTP', () => {
  it('pages through exactly the stored trips, in order, and the numbers agree across endpoints', async () => {
    const users = await warehouseRows(ws.paths, 'select distinct org_user_id, user_id from trips order by 1');
    expect(users.length).toBe(6);
    let pages = 0;
    for (const user of users) {
      const org = String(user['org_user_id']);
      const listed: any[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(
          `/v1/org-user/${org}/trips?limit=7${cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.status).toBe(200);
        listed.push(...page.body.trips);
        cursor = page.body.nextCursor;
        pages++;
      } while (cursor);
      const stored = await warehouseRows(
        ws.paths,
        `select trip_id, is_normal, trip_date::varchar as d from trips where user_id = ${Number(user['user_id'])} order by started_at desc, trip_id desc`,
      );
      expect(listed.map((t) => t.tripId)).toEqual(stored.map((t) => t['trip_id']));

      const normal = new Set(stored.filter((t) => t['is_normal']).map((t) => t['trip_id']));
      const days = stored.map((t) => String(t['d'])).sort();
      const stats = await call(
        `/v1/org-user/${org}/statistics?type=month&startTime=${days[0]}&endTime=${days[days.length - 1]}`,
      );
      const sum = (f: (s: any) => number) => stats.body.statistics.reduce((a: number, s: any) => a + f(s), 0);
      const normalListed = listed.filter((t) => normal.has(t.tripId));
      expect(sum((s) => s.mileageInMeters)).toBe(normalListed.reduce((a, t) => a + t.mileageInMeters, 0));
      expect(sum((s) => s.durationInSeconds)).toBe(normalListed.reduce((a, t) => a + t.durationInSeconds, 0));
      expect(sum((s) => s.eventCount)).toBe(normalListed.reduce((a, t) => a + t.eventCount, 0));

      const score = await call(`/v1/org-user/${org}/safety-score?interval=30`);
      expect(score.status).toBe(200);
      const inWindow = normalListed.filter(
        (t) => t.startTime >= score.body.score.startTime && t.startTime <= score.body.score.endTime,
      );
      expect(score.body.score.tripCount).toBe(inWindow.length);
    }
    // the cursor was followed: users' trips took more than one page (the days generated end at
    // the hour the test runs, so how many varies a little)
    expect(pages).toBeGreaterThan(users.length + 2);
  });

  it('authenticates by the matched route, so an absolute-form request target is no way around the key', async () => {
    const { request } = await import('node:http');
    const url = new URL(base);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, method: 'GET', path: `${base}/v1/org-user/driver-00001/trips?limit=1` },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
  });

  it('fails no request while publishes switch the snapshot under a stream of concurrent requests', async () => {
    const users = (await warehouseRows(ws.paths, 'select distinct org_user_id from trips')).map((u) =>
      String(u['org_user_id']),
    );
    const paths = [
      (u: string) => `/v1/org-user/${u}/trips?limit=20`,
      (u: string) => `/v1/org-user/${u}/statistics?type=week&startTime=2026-01-01&endTime=2026-12-31`,
      (u: string) => `/v1/org-user/${u}/safety-score?interval=90`,
    ];
    const before = manifestOf(ws.paths)!;
    let running = true;
    const failures: string[] = [];
    let done = 0;
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        const path = paths[i % paths.length]!(users[(i + w) % users.length]!);
        const res = await call(path);
        if (res.status !== 200) failures.push(`${res.status} ${path} ${JSON.stringify(res.body)}`);
        done++;
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    try {
      // one publish a day file
      for (const file of laterDays) await runLoad({ dataDir: ws.dir, inputs: [file], now });
    } finally {
      running = false;
      await Promise.all(workers);
    }
    expect(laterDays).toHaveLength(3);
    expect(manifestOf(ws.paths)!.version).toBeGreaterThan(before.version + 2);
    expect(failures).toEqual([]);
    expect(done).toBeGreaterThan(100);
  });
});
