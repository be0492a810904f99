// Several machines on one host, each a data folder of its own, sharing one real PostgreSQL: a job
// machine (load.js --watch, serve.js) and two API machines (serve.js --follow the job machine's
// folder) behind the real HAProxy with deploy/haproxy-machines.cfg. API machines started before any
// publish answer 503 not_ready, then serve; uploads through either API machine are served by both
// and leave nothing in the landing area of the machine that took them; an API machine killed with -9
// and its folder removed after its 202s: its uploads are still served; the job machine's watch
// killed: uploads are still accepted and reads answered, and all of them are served once it is
// started again; a DELETE through HAProxy erases the driver from every API machine's copy; an
// upload wakes the job machine's watch through LISTEN/NOTIFY, not its poll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { closeUploadQueues, UploadQueue } from '../../src/intake/upload-queue.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates } from '../../src/state/open.js';
import { ROOT, startJob } from '../helpers/job-process.js';
import { freePort, startPostgres, type PgServer } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { tripRecord } from '../helpers/trips.js';

const HAPROXY = process.env['DRIVING_HAPROXY'] ?? '/usr/sbin/haproxy';
/** Uploads through either API machine are served by both within this (bars/18-several-machines). */
const SERVED_WITHIN_MS = 20_000;

let pg: PgServer;
let url: string;
let queue: UploadQueue;
let jobDir: string;
let appId: string;
let apiKey: string;
const tokens = new Map<string, string>();
const dirs: string[] = [];
const serves: ServeProcess[] = [];
let watch: { child: ChildProcess; done: Promise<{ code: number | null; stderr: string }> } | null = null;
let watchLog = '';
let haproxy: ChildProcess | null = null;
let front = '';
let apiA: ServeProcess;
let apiB: ServeProcess;
let dirA: string;
let dirB: string;

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-${name}-`));
  dirs.push(dir);
  return dir;
};

const env = () => ({ DATABASE_URL: url, DRIVING_FOLLOW_POLL: '200ms' });

async function serve(dataDir: string, args: string[] = []): Promise<ServeProcess> {
  const s = await startServe(
    ['--data-dir', dataDir, '--port', String(await freePort()), '--workers', '1', '--no-metrics', ...args],
    env(),
  );
  serves.push(s);
  return s;
}

function startWatch(pollMs = 200): void {
  watch = startJob('load', ['--data-dir', jobDir, '--watch', '--poll-ms', String(pollMs), '--max-rest-ms', '0'], env());
  watchLog = '';
  watch.child.stderr?.on('data', (c: Buffer) => (watchLog += c.toString()));
}

/** What the machines said, for a failed wait. */
const said = (): string =>
  [`watch: ${watchLog.slice(-3000)}`, ...serves.map((s) => `serve ${s.url}: ${s.stderr().slice(-1500)}`)].join('\n');

async function stopWatch(signal: NodeJS.Signals): Promise<void> {
  const w = watch;
  watch = null;
  w?.child.kill(signal);
  await w?.done;
}

const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
let hour = 0;
const trip = (tripId: string) =>
  tripRecord({ appId, tripId, start: `${day}T${String(hour++ % 24).padStart(2, '0')}:05:00Z`, seconds: 120 });

async function upload(base: string, driver: string, tripIds: string[]): Promise<void> {
  const res = await fetch(`${base}/v1/sdk/trips`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.get(driver)}`, 'content-type': 'application/json' },
    body: JSON.stringify(tripIds.map(trip)),
  });
  expect(res.status, await res.clone().text()).toBe(202);
}

const tripIds = async (base: string, driver: string): Promise<string[] | number> => {
  const res = await fetch(`${base}/v1/org-user/${driver}/trips?startTime=${day}&endTime=${day}T23:59:59Z`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (res.status !== 200) return res.status;
  return ((await res.json()) as { trips: { tripId: string }[] }).trips.map((t) => t.tripId).sort();
};

/** Until every server lists `expected` among the driver's trips. */
async function servedBy(servers: ServeProcess[], driver: string, expected: string[], ms: number): Promise<void> {
  await until(
    async () => {
      for (const s of servers) {
        const got = await tripIds(s.url, driver);
        if (typeof got === 'number' || !expected.every((t) => got.includes(t))) return false;
      }
      return true;
    },
    `${expected.join(', ')} served by every API machine`,
    ms,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${said()}`);
  });
}

const sdkFiles = (dataDir: string): string[] => {
  const landing = pathsFor(dataDir).landingDir;
  return existsSync(landing) ? readdirSync(landing).filter((n) => n.startsWith('sdk-') || n.startsWith('.sdk-')) : [];
};

/** Rows of a driver in every slot file of a machine's copy. */
async function rowsInSlots(dataDir: string, orgUserId: string): Promise<number> {
  const published = pathsFor(dataDir).publishedDir;
  let n = 0;
  for (const name of readdirSync(published).filter((f) => /^slot-[ab]\.duckdb$/.test(f))) {
    // removed by the follower since the listing: it holds nobody
    const db = await openDatabase(join(published, name), { readOnly: true }).catch(() => null);
    if (!db) continue;
    try {
      const [row] = await query(db.connection, 'select count(*)::int as n from trips where org_user_id = $org', {
        org: orgUserId,
      });
      n += Number(row?.['n'] ?? 0);
    } finally {
      db.close();
    }
  }
  return n;
}

/** deploy/haproxy-machines.cfg with its front door and two API machines on loopback ports. */
function haproxyConfig(frontPort: number, a: string, b: string): string {
  const text = readFileSync(join(ROOT, 'deploy', 'haproxy-machines.cfg'), 'utf8');
  expect(text).toContain('bind :8080');
  return text
    .replace('bind :8080', `bind 127.0.0.1:${frontPort}`)
    .replace(/server api1 \S+/, `server api1 ${new URL(a).host}`)
    .replace(/server api2 \S+/, `server api2 ${new URL(b).host}`)
    .replace(/\n\s*server api3 [^\n]*/, '');
}

beforeAll(async () => {
  if (!existsSync(HAPROXY)) throw new Error(`HAProxy is not installed (${HAPROXY}): apt-get install haproxy`);
  pg = await startPostgres();
  url = await pg.database();
  jobDir = folder('job');
  const added = await new AppStore({ dataDir: jobDir, databaseUrl: url }).add({ name: 'Fleet', timeZone: 'UTC' });
  appId = added.appId;
  apiKey = added.apiKey;
  const passport = await PassportStore.open({ dataDir: jobDir, databaseUrl: url });
  for (const driver of ['driver-1', 'driver-2'])
    tokens.set(driver, (await passport.issueToken(appId, driver, new Date(), 24 * 3_600_000)).token);
  queue = await UploadQueue.open(url);
});

afterAll(async () => {
  haproxy?.kill('SIGKILL');
  watch?.child.kill('SIGKILL');
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(serves.map((s) => s.exited));
  await watch?.done;
  await queue?.close();
  await closeUploadQueues();
  await closeStates();
  await pg?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a job machine and two API machines behind HAProxy, sharing PostgreSQL', () => {
  it('API machines started before any publish answer 503 not_ready, then serve once the job machine publishes', async () => {
    dirA = folder('api-a');
    dirB = folder('api-b');
    apiA = await serve(dirA, ['--follow', jobDir]);
    apiB = await serve(dirB, ['--follow', jobDir]);
    const waiting = await fetch(`${apiA.url}/readyz`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toMatchObject({ status: 'not_ready', reason: 'no_snapshot_copied' });
    startWatch();
    await serve(jobDir);
    await until(
      async () =>
        (await fetch(`${apiA.url}/readyz`)).status === 200 && (await fetch(`${apiB.url}/readyz`)).status === 200,
      'both API machines ready',
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${said()}`);
    });
    const frontPort = await freePort();
    const cfg = join(jobDir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(frontPort, apiA.url, apiB.url));
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'ignore'] });
    front = `http://127.0.0.1:${frontPort}`;
    await until(async () => (await fetch(`${front}/readyz`).catch(() => null))?.status === 200, 'HAProxy in front');
  });

  it('uploads through either API machine are served by both, and nothing waits on the machine that took them', async () => {
    await upload(apiA.url, 'driver-1', ['a-1', 'a-2']);
    await upload(apiB.url, 'driver-1', ['b-1']);
    await upload(front, 'driver-2', ['h-1']);
    await servedBy([apiA, apiB], 'driver-1', ['a-1', 'a-2', 'b-1'], SERVED_WITHIN_MS);
    await servedBy([apiA, apiB], 'driver-2', ['h-1'], SERVED_WITHIN_MS);
    expect(sdkFiles(dirA)).toEqual([]);
    expect(sdkFiles(dirB)).toEqual([]);
    expect((await queue.backlog()).waiting).toBe(0);
  });

  it('an API machine killed with -9 and its folder removed after its 202s: its uploads are still served', async () => {
    await upload(apiA.url, 'driver-1', ['lost-1', 'lost-2']);
    apiA.child.kill('SIGKILL');
    await apiA.exited;
    rmSync(dirA, { recursive: true, force: true });
    await servedBy([apiB], 'driver-1', ['lost-1', 'lost-2'], SERVED_WITHIN_MS);
    // the machine comes back with an empty folder: it copies the job machine's last publish, then serves
    dirA = folder('api-a2');
    apiA = await serve(dirA, ['--follow', jobDir]);
    await servedBy([apiA], 'driver-1', ['a-1', 'lost-1', 'lost-2'], SERVED_WITHIN_MS);
  });

  it('the job machine down: uploads are accepted and reads answered; all served once it is back', async () => {
    await stopWatch('SIGKILL');
    for (let i = 0; i < 4; i++) await upload(front, 'driver-1', [`down-${i}`]);
    await upload(apiB.url, 'driver-2', ['down-b']);
    expect((await queue.backlog()).waiting).toBe(5);
    for (const s of [apiA, apiB]) {
      const listed = await tripIds(s.url, 'driver-1');
      expect(listed).toEqual(expect.arrayContaining(['a-1', 'b-1']));
      expect(listed).not.toContain('down-0');
    }
    expect((await fetch(`${front}/readyz`)).status).toBe(200);
    startWatch();
    await servedBy([apiA, apiB], 'driver-1', ['down-0', 'down-1', 'down-2', 'down-3'], 60_000);
    await servedBy([apiA, apiB], 'driver-2', ['down-b'], 60_000);
    expect((await queue.backlog()).waiting).toBe(0);
    expect(sdkFiles(dirA)).toEqual([]);
    expect(sdkFiles(dirB)).toEqual([]);
  });

  it("a DELETE through HAProxy erases the driver from every API machine's copy within a minute", async () => {
    expect(await rowsInSlots(dirA, 'driver-2')).toBeGreaterThan(0);
    const res = await fetch(`${front}/v1/org-user/driver-2`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status, await res.text()).toBe(200);
    await until(
      async () => (await rowsInSlots(dirA, 'driver-2')) === 0 && (await rowsInSlots(dirB, 'driver-2')) === 0,
      "driver-2 erased from both API machines' copies",
      60_000,
    );
    expect(await rowsInSlots(dirA, 'driver-1')).toBeGreaterThan(0);
    for (const s of [apiA, apiB]) expect(await tripIds(s.url, 'driver-2')).toBe(404);
  });

  it('an upload wakes the job machine at once (LISTEN/NOTIFY), not at its next poll', async () => {
    await stopWatch('SIGTERM');
    // a poll far longer than the wait: only the notification can wake the watch in time
    startWatch(60_000);
    // after its first batch (which takes in whatever waits), the watch sleeps until woken
    const metrics = join(jobDir, 'metrics', 'driving_load_watch.prom');
    rmSync(metrics, { force: true });
    await until(
      () => existsSync(metrics) && readFileSync(metrics, 'utf8').includes('driving_load_batches_total{outcome="ok"} 1'),
      'first batch',
    );
    await upload(front, 'driver-1', ['notified-1']);
    await servedBy([apiA, apiB], 'driver-1', ['notified-1'], SERVED_WITHIN_MS);
    expect((await queue.backlog()).waiting).toBe(0);
  });
});
