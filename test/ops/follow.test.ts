// API machines that follow a job machine (serve.js --follow), each "machine" a data folder of its
// own on this host: the job machine loads and publishes with the real jobs; an API machine copies
// each publish with rsync (from a local path, and from a real rsync daemon this file starts) and
// answers the same as the job machine's own API; a second load is switched to; a purged driver
// leaves the copy's answers and files; a new API machine answers 503 with the reason until its
// first copy; the source gone, the copy stays served and says how far behind it is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { PassportStore } from '../../src/passport/store.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { readManifest } from '../../src/publish/manifest.js';
import { verifyCopy } from '../../src/follow/verify.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { runJobProcess } from '../helpers/job-process.js';
import { freePort } from '../helpers/postgres.js';
import { runTool, tool } from '../helpers/processes.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { tripRecord } from '../helpers/trips.js';
import { sameApps, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

const POLL = { DRIVING_FOLLOW_POLL: '200ms' };
const PROMTOOL = tool('promtool');

let job: Workspace;
let key = '';
const started: ServeProcess[] = [];
const folders: Workspace[] = [];
let fileNo = 0;

let ids = new Map<string, number>();

const trip = (org: string, tripId: string, hour: number) =>
  tripRecord({
    appId: job.appId,
    tripId,
    userId: ids.get(org) as number,
    orgUserId: org,
    start: `2026-11-19T${String(hour).padStart(2, '0')}:00:00Z`,
    seconds: 240,
    events: [{ type: 'brake', from: 60, to: 63 }],
  });

/** Loads records on the job machine with load.js (which publishes). */
async function load(ws: Workspace, records: unknown[]): Promise<void> {
  const file = writeNdjson(join(ws.dir, 'incoming', `part-${++fileNo}.ndjson`), records);
  const ran = await runJobProcess('load', ['--data-dir', ws.dir, '--input', file]);
  expect(ran.code, ran.stderr).toBe(0);
}

async function serve(ws: Workspace, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const s = await startServe(
    ['--data-dir', ws.dir, '--port', String(await freePort()), '--workers', '1', '--no-metrics', ...args],
    { ...POLL, ...env },
  );
  started.push(s);
  return s;
}

/** A new API machine's folder: the job machine's apps and keys, nothing published. */
function apiMachine(): Workspace {
  const ws = sameApps(job);
  folders.push(ws);
  return ws;
}

const get = async (s: ServeProcess, path: string): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
};

const tripIds = async (s: ServeProcess, org: string): Promise<string[]> => {
  const res = await get(s, `/v1/org-user/${org}/trips?startTime=2026-11-01&endTime=2026-11-30`);
  if (res.status !== 200) return [`status ${res.status}`];
  return ((res.body as { trips: { tripId: string }[] }).trips ?? []).map((t) => t.tripId).sort();
};

const version = async (s: ServeProcess): Promise<number | null> => {
  const res = await fetch(`${s.url}/readyz`);
  return res.status === 200 ? ((await res.json()) as { version: number }).version : null;
};

/** Rows of a driver in every slot file of a folder (the served one and any other left there). */
async function rowsInSlots(ws: Workspace, orgUserId: string): Promise<number> {
  let n = 0;
  for (const name of readdirSync(ws.paths.publishedDir).filter((f) => /^slot-[ab]\.duckdb$/.test(f))) {
    // removed by the follower since the listing: it holds nobody
    const db = await openDatabase(join(ws.paths.publishedDir, name), { readOnly: true }).catch(() => null);
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

beforeAll(async () => {
  job = await workspace('UTC');
  key = (await new AppStore(job.paths.appsFile).rotateKey(job.appId)).apiKey;
  const passport = await PassportStore.open(job.paths.passportFile);
  ids = await passport.ensureAccounts(job.appId, ['driver-1', 'driver-2']);
  passport.close();
  await load(job, [trip('driver-1', 't1', 8), trip('driver-2', 't2', 9)]);
});

afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(started.map((s) => s.exited));
  for (const ws of folders) ws.cleanup();
  job?.cleanup();
});

describe('serve.js --follow a local path', () => {
  let own: ServeProcess;
  let follower: ServeProcess;
  let machine: Workspace;

  beforeAll(async () => {
    own = await serve(job);
    machine = apiMachine();
    follower = await serve(machine, ['--follow', job.dir]);
  });

  it('answers the same trips and statistics as the job machine, from a copy of its own', async () => {
    await until(async () => (await version(follower)) === readManifest(job.paths.manifestFile)?.version, 'first copy');
    for (const path of [
      '/v1/org-user/driver-1/trips?startTime=2026-11-01&endTime=2026-11-30',
      '/v1/org-user/driver-1/trip/t1',
      '/v1/org-user/driver-2/statistics?type=day&startTime=2026-11-19&endTime=2026-11-20',
    ]) {
      const [mine, theirs] = await Promise.all([get(follower, path), get(own, path)]);
      expect(mine.status, path).toBe(200);
      expect(mine.body, path).toEqual(theirs.body);
    }
    // the copy is the follower's own: the files the manifest names, in its own folder
    const manifest = readManifest(machine.paths.manifestFile);
    expect(manifest).toEqual(readManifest(job.paths.manifestFile));
    expect(existsSync(join(machine.paths.publishedDir, manifest!.file))).toBe(true);
    const ready = (await (await fetch(`${follower.url}/readyz`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ status: 'ready', follow: { versionsBehind: 0, failing: false } });
    // /readyz is unauthenticated: no path of the job machine
    expect(JSON.stringify(ready)).not.toContain(job.dir);
    expect(ready['reason']).toBeUndefined();
  });

  it('switches to the next publish of the job machine', async () => {
    const before = (await version(follower)) as number;
    await load(job, [trip('driver-1', 't3', 11)]);
    await until(async () => (await tripIds(follower, 'driver-1')).includes('t3'), 'the second load served');
    expect(await version(follower)).toBeGreaterThan(before);
    expect(await tripIds(follower, 'driver-1')).toEqual(['t1', 't3']);
    // what the copy moved is said: a delta, not the history
    const ready = (await (await fetch(`${follower.url}/readyz`)).json()) as {
      follow: { lastCopy: { version: number } };
    };
    expect(ready.follow.lastCopy.version).toBe(readManifest(job.paths.manifestFile)?.version);
  });

  it("erases a driver purged on the job machine from the copy's answers and files", async () => {
    expect(await rowsInSlots(machine, 'driver-2')).toBeGreaterThan(0);
    await recordDeletionIn(job.dir, {
      appId: job.appId,
      platformUserId: ids.get('driver-2') as number,
      orgUserId: 'driver-2',
      requestedAt: new Date().toISOString(),
    });
    const purged = await runJobProcess('purge', ['--data-dir', job.dir]);
    expect(purged.code, purged.stderr).toBe(0);
    await until(
      async () => (await get(follower, '/v1/org-user/driver-2/trip/t2')).status === 404,
      'the purged trip gone from the copy',
    );
    // the slot served before the purge (it held the driver) leaves the copy too
    await until(async () => (await rowsInSlots(machine, 'driver-2')) === 0, 'no slot of the copy holding the driver');
    expect(await tripIds(follower, 'driver-1')).toEqual(['t1', 't3']);
  });

  it('copies again a file of the served snapshot lost on the API machine', async () => {
    const manifest = readManifest(machine.paths.manifestFile)!;
    const lost = [manifest.file, ...(manifest.pack?.files.trips ?? [])].map((f) => join(machine.paths.publishedDir, f));
    for (const f of lost) rmSync(f);
    await until(() => lost.every((f) => existsSync(f)), 'the lost files copied again');
    expect(readManifest(machine.paths.manifestFile)).toEqual(manifest);
    expect(await tripIds(follower, 'driver-1')).toEqual(['t1', 't3']);
  });
});

describe('serve.js --follow a new machine', () => {
  it('answers 503 not_ready with the reason until its first copy, then serves', async () => {
    const source = sameApps(job);
    folders.push(source);
    const machine = apiMachine();
    const follower = await serve(machine, ['--follow', source.dir]);
    const waiting = await fetch(`${follower.url}/readyz`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toMatchObject({
      status: 'not_ready',
      reason: 'no_snapshot_copied',
      detail: expect.stringMatching(/^following the job machine: no snapshot copied yet/),
    });
    expect((await get(follower, '/v1/org-user/driver-1/trips?startTime=2026-11-01&endTime=2026-11-30')).status).toBe(
      503,
    );
    await load(source, [trip('driver-1', 'n1', 7)]);
    await until(async () => (await tripIds(follower, 'driver-1')).join() === 'n1', 'the first copy served');
  });
});

describe('serve.js --follow killed during a copy', () => {
  it('restarts to a verified copy: no manifest before its files, no temporary file left', async () => {
    const machine = apiMachine();
    // rsync as installed, behind a script that says when the copy of the named files starts and
    // holds it a moment, so that the process is killed within it
    const bin = join(machine.dir, 'bin');
    const mark = join(machine.dir, 'copy-started');
    mkdirSync(bin);
    const real = execFileSync('sh', ['-c', 'command -v rsync']).toString().trim();
    writeFileSync(
      join(bin, 'rsync'),
      `#!/bin/sh\ncase "$*" in *--files-from=*) touch '${mark}'; sleep 2;; esac\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    const first = await serve(machine, ['--follow', job.dir], { PATH: `${bin}:${process.env['PATH']}` });
    await until(() => existsSync(mark), 'the copy under way');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(machine.paths.manifestFile)).toBe(false);
    const again = await serve(machine, ['--follow', job.dir]);
    await until(async () => (await tripIds(again, 'driver-1')).join() === 't1,t3', 'the copy served after the restart');
    expect(readManifest(machine.paths.manifestFile)).toEqual(readManifest(job.paths.manifestFile));
    // the killed copy's rsync ends by itself; what it left is removed at a later check
    await until(
      () => readdirSync(machine.paths.publishedDir).every((name) => !name.startsWith('.')),
      'no temporary file left in published/',
    );
  });
});

describe("the follower's check of a copy", () => {
  it('refuses a serving file or a slot that is not what the manifest names, and removes it to be copied whole', async () => {
    const copy = apiMachine();
    cpSync(job.paths.publishedDir, copy.paths.publishedDir, { recursive: true });
    const manifest = readManifest(copy.paths.manifestFile)!;
    const layer = (manifest.pack?.files.trips ?? [])[0] as string;
    const written = [manifest.file, layer];
    await expect(verifyCopy(copy.paths.publishedDir, manifest, written)).resolves.toBeUndefined();
    // one byte changed in a layer: its SHA-256 differs from the manifest's
    const path = join(copy.paths.publishedDir, layer);
    const bytes = readFileSync(path);
    bytes[0] = (bytes[0] as number) ^ 0xff;
    writeFileSync(path, bytes);
    await expect(verifyCopy(copy.paths.publishedDir, manifest, written)).rejects.toThrow(/SHA-256/);
    expect(existsSync(path)).toBe(false);
    // a slot of another version than the manifest names
    await expect(
      verifyCopy(copy.paths.publishedDir, { ...manifest, version: manifest.version + 1 }, [manifest.file]),
    ).rejects.toThrow(/holds version/);
    expect(existsSync(join(copy.paths.publishedDir, manifest.file))).toBe(false);
  });
});

describe('serve.js --follow an rsync daemon', () => {
  let daemon: ChildProcess;
  let follower: ServeProcess;
  let metricsPort = 0;

  beforeAll(async () => {
    const port = await freePort();
    const conf = join(job.dir, '..', `${job.dir.split('/').pop()}-rsyncd.conf`);
    // a read-only module over the job machine's data folder, as deploy/rsyncd.conf gives it
    writeFileSync(
      conf,
      [
        'use chroot = no',
        `uid = ${process.getuid?.() ?? 0}`,
        `gid = ${process.getgid?.() ?? 0}`,
        `pid file = ${conf}.pid`,
        '[driving]',
        `  path = ${job.dir}`,
        '  read only = yes',
        '  include = /published/ /published/***',
        '  exclude = *',
        '',
      ].join('\n'),
    );
    daemon = spawn('rsync', ['--daemon', '--no-detach', `--config=${conf}`, `--port=${port}`, '--address=127.0.0.1'], {
      stdio: 'ignore',
    });
    const machine = apiMachine();
    metricsPort = await freePort();
    follower = await startServe(
      [
        '--data-dir',
        machine.dir,
        '--port',
        String(await freePort()),
        // a cluster: one follower in the primary, its status read by both workers and summed by the primary's /metrics
        '--workers',
        '2',
        '--metrics-port',
        String(metricsPort),
        '--follow',
        `rsync://127.0.0.1:${port}/driving`,
      ],
      POLL,
    );
    started.push(follower);
  });

  afterAll(() => {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  });

  const metric = async (name: string): Promise<number | null> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };

  it('copies through the daemon and serves; the daemon gone, it keeps serving and says the lag', async () => {
    await until(async () => (await tripIds(follower, 'driver-1')).join() === 't1,t3', 'the copy served', 90_000);
    expect(await metric('driving_follow_failing')).toBe(0);
    expect(await metric('driving_follow_versions_behind')).toBe(0);
    expect(await metric('driving_follow_copies')).toBe(1);
    // one follower for the machine, not one a worker: a single copy was made and logged
    expect(follower.stderr().match(/serve: follow: copied /g)).toHaveLength(1);
    if (PROMTOOL) {
      const lint = runTool(
        PROMTOOL,
        ['check', 'metrics'],
        await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
      );
      expect(lint.output).toBe('');
      expect(lint.status).toBe(0);
    }
    daemon.kill('SIGKILL');
    await until(async () => (await metric('driving_follow_failing')) === 1, 'the failure said');
    const ready = await fetch(`${follower.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      reason: 'follow_failing',
      follow: { failing: true },
    });
    expect(await tripIds(follower, 'driver-1')).toEqual(['t1', 't3']);
    const lag = (await metric('driving_follow_lag_seconds')) as number;
    await until(async () => ((await metric('driving_follow_lag_seconds')) as number) > lag, 'the lag growing');
  });
});
