// Every API process answers each request from one snapshot (docs/decisions.md, Files and
// processes): a driver's trip list, read over and over from serve.js with two workers while a load
// adds two of the driver's trips and replaces a third, is at every moment either the answer before
// the load or the answer after it, never a mix (the new trips beside the replaced trip's old copy).
// Each request goes on a connection of its own, so both workers answer; the rate limits are raised
// so that no answer is a 429. Served from the serving pack, and by SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
let key = '';
let userId = 0;
const clock = new Date('2026-11-21T09:00:00Z');

const trip = (tripId: string, start: string, seconds: number, speed: number) =>
  tripRecord({ appId: ws.appId, tripId, userId, orgUserId: 'reader', start, seconds, speed: () => speed });

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  userId = (await passport.ensureAccounts(ws.appId, ['reader'])).get('reader') as number;
  passport.close();
}, 120_000);
afterAll(() => ws?.cleanup());

/** GET on a connection of its own (no keep-alive: the primary hands each to a worker); the body as text. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const tripIds = (body: string): string[] =>
  (JSON.parse(body) as { trips: { tripId: string }[] }).trips.map((t) => t.tripId);

describe.each(['pack', 'sql'])('one snapshot per request (serving %s, two workers)', (serving) => {
  let serve: ServeProcess;
  const day = serving === 'pack' ? 10 : 11;
  const prefix = `${serving}-`;

  beforeAll(async () => {
    // the driver's history: six trips over three days (a base layer of the pack)
    const history = Array.from({ length: 6 }, (_, i) =>
      trip(`${prefix}old-${i}`, `2026-11-${day}T${String(6 + i).padStart(2, '0')}:00:00+01:00`, 600, 10),
    );
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', `${serving}-history.ndjson`), history)],
      now: clock,
    });
    serve = await startServe(
      [
        '--data-dir',
        ws.dir,
        '--port',
        String(await freePort()),
        '--workers',
        '2',
        '--serving',
        serving,
        '--no-metrics',
      ],
      { DRIVING_API_RATE_PER_APP: '1000000', DRIVING_API_RATE_PER_ADDRESS: '1000000' },
    );
  }, 120_000);
  afterAll(async () => {
    if (serve && serve.child.exitCode === null) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('answers the trip list before the load or after it, never a mix', async () => {
    const url = `${serve.url}/v1/org-user/reader/trips?limit=20&startTime=2026-11-${day}&endTime=2026-11-${day}`;
    const before = await get(url);
    expect(before.status).toBe(200);
    expect(tripIds(before.body)).toEqual([5, 4, 3, 2, 1, 0].map((i) => `${prefix}old-${i}`));

    // two new trips, and trip 2 sent again with other values (it replaces the earlier copy)
    const changes = [
      trip(`${prefix}new-a`, `2026-11-${day}T16:00:00+01:00`, 300, 12),
      trip(`${prefix}new-b`, `2026-11-${day}T17:00:00+01:00`, 300, 12),
      trip(`${prefix}old-2`, `2026-11-${day}T08:00:00+01:00`, 900, 20),
    ];
    const answers: { status: number; body: string }[] = [];
    let loaded = false;
    const loading = runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', `${serving}-changes.ndjson`), changes)],
      now: clock,
    }).finally(() => {
      loaded = true;
    });
    // two readers, one request at a time each, until the load is done and both workers answer alike
    const settled = () => {
      const last = answers.slice(-20);
      return loaded && last.length === 20 && last.every((a) => a.body === last[0]?.body && a.body !== before.body);
    };
    const reader = async () => {
      while (!settled()) answers.push(await get(url));
    };
    await Promise.all([reader(), reader(), loading]);
    await until(settled, 'both workers to answer from the new snapshot');

    const after = answers[answers.length - 1] as { status: number; body: string };
    expect(tripIds(after.body)).toEqual([
      `${prefix}new-b`,
      `${prefix}new-a`,
      ...[5, 4, 3, 2, 1, 0].map((i) => `${prefix}old-${i}`),
    ]);
    const replaced = (body: string) =>
      (JSON.parse(body) as { trips: { tripId: string; durationInSeconds: number }[] }).trips.find(
        (t) => t.tripId === `${prefix}old-2`,
      )?.durationInSeconds;
    expect([replaced(before.body), replaced(after.body)]).toEqual([600, 900]);

    const mixed = answers.filter((a) => a.body !== before.body && a.body !== after.body);
    expect(mixed.map((a) => `${a.status} ${a.body.slice(0, 300)}`)).toEqual([]);
    expect(answers.length).toBeGreaterThan(20);
  }, 180_000);
});
