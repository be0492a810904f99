// SDK uploads in PostgreSQL (with DATABASE_URL), against a real server: the API in process commits
// an accepted upload there and writes nothing to its own landing area; load.js (a real process)
// takes it into its landing area, loads it and releases it; a take-in cut short between its landing
// write and its release (the release refused, as a process killed there leaves it) loads each upload
// once, whether the next take-in finds the file still waiting or already loaded; /metrics says how
// many uploads wait and the oldest one's age; PostgreSQL down:
// the upload is answered 503 with Retry-After, never 500, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { pathsFor } from '../../src/data-folder.js';
import { takeInUploads } from '../../src/intake/take-in.js';
import { closeUploadQueues, UploadQueue } from '../../src/intake/upload-queue.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates } from '../../src/state/open.js';
import { runJobProcess } from '../helpers/job-process.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { tripRecord } from '../helpers/trips.js';
import { warehouseRows } from '../helpers/workspace.js';

let pg: PgServer;
let url: string;
const dirs: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await closeUploadQueues();
  await closeStates();
  await pg?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-${name}-`));
  dirs.push(dir);
  return dir;
};

const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
const trip = (appId: string, tripId: string, hour: number) =>
  tripRecord({ appId, tripId, start: `${day}T${String(hour).padStart(2, '0')}:00:00Z`, seconds: 120 });

const sdkFiles = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('sdk-') || n.startsWith('.sdk-')) : [];

/** A job machine's folder and an API machine's, one app in the shared store, a token for driver-1. */
async function machines(): Promise<{ jobDir: string; apiDir: string; appId: string; token: string }> {
  url = await pg.database();
  const jobDir = folder('job');
  const apiDir = folder('api');
  const { appId } = await new AppStore({ dataDir: jobDir, databaseUrl: url }).add({ name: 'Fleet', timeZone: 'UTC' });
  const passport = await PassportStore.open({ dataDir: jobDir, databaseUrl: url });
  const { token } = await passport.issueToken(appId, 'driver-1', new Date(), 3_600_000);
  return { jobDir, apiDir, appId, token };
}

async function upload(apiDir: string, token: string, records: unknown[]) {
  const api = await createApi({ dataDir: apiDir, databaseUrl: url });
  try {
    return await api.app.inject({
      method: 'POST',
      url: '/v1/sdk/trips',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(records),
    });
  } finally {
    await api.close();
  }
}

/** What an API process's /metrics would answer (its registry, as the metrics port serves it). */
async function scraped(apiDir: string): Promise<string> {
  const registry = new Registry();
  const api = await createApi({ dataDir: apiDir, databaseUrl: url, metrics: registry });
  try {
    return await registry.metrics();
  } finally {
    await api.close();
  }
}

const load = async (jobDir: string) => {
  const ran = await runJobProcess('load', ['--data-dir', jobDir], { DATABASE_URL: url });
  expect(ran.code, ran.stderr).toBe(0);
  return ran;
};

const tripsLoaded = async (jobDir: string): Promise<string[]> =>
  (await warehouseRows(pathsFor(jobDir), 'select trip_id from trips order by trip_id')).map((r) =>
    String(r['trip_id']),
  );

/** How many times a file holding `name`'s bytes was loaded: as a file, or inside a loaded batch. */
const sdkLoads = async (jobDir: string): Promise<number> =>
  (await warehouseRows(pathsFor(jobDir), "select count(*)::int as n from loaded_files where path like '%sdk-%'"))[0]?.[
    'n'
  ] as number;

/** The queue, whose release fails as a process killed between the landing write and the release leaves it. */
const killedBeforeRelease = (queue: UploadQueue) =>
  Object.assign(Object.create(queue) as UploadQueue, {
    release: () => Promise.reject(new Error('killed before the release')),
  });

describe('uploads in PostgreSQL', () => {
  it('a 202 commits the upload in PostgreSQL, never in the landing area of the machine that took it; load.js takes it in and releases it', async () => {
    const { jobDir, apiDir, appId, token } = await machines();
    const res = await upload(apiDir, token, [trip(appId, 'u1', 8), trip(appId, 'u2', 9)]);
    expect(res.statusCode, res.body).toBe(202);
    expect(sdkFiles(pathsFor(apiDir).landingDir)).toEqual([]);
    const queue = await UploadQueue.open(url);
    try {
      expect((await queue.backlog()).waiting).toBe(1);
      // every API machine's /metrics says what waits for the job machine
      expect(await scraped(apiDir)).toMatch(/^driving_uploads_waiting 1$/m);
      expect(await scraped(apiDir)).toMatch(/^driving_uploads_oldest_waiting_seconds \d/m);
      const ran = await load(jobDir);
      expect(ran.stderr + ran.stdout).toMatch(/1 SDK upload\(s\) taken in from PostgreSQL/);
      expect(await tripsLoaded(jobDir)).toEqual(['u1', 'u2']);
      expect(await queue.backlog()).toEqual({ waiting: 0, oldestSeconds: null });
      expect(await scraped(apiDir)).toMatch(/^driving_uploads_waiting 0$/m);
      expect(sdkFiles(pathsFor(jobDir).landingDir)).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('reads a page of waiting uploads up to a size, in order: a forwarded piece of a partner file is up to 16 MiB', async () => {
    const queue = await UploadQueue.open(await pg.database());
    try {
      const mib = Buffer.alloc(2 ** 20, 0x61);
      for (const n of [1, 2, 3]) await queue.put(`piece-${n}.ndjson`, 'app', new Date(), mib, 'b');
      // the content before each upload taken is under the size: the first two of 1 MiB under 1.5 MiB
      expect((await queue.waiting(100, 'b', 1.5 * 2 ** 20)).map((u) => u.name)).toEqual([
        'piece-1.ndjson',
        'piece-2.ndjson',
      ]);
      // one at least, however large
      expect((await queue.waiting(100, 'b', 1)).map((u) => u.name)).toEqual(['piece-1.ndjson']);
      // another cell's load takes none of them
      expect(await queue.waiting(100, 'a')).toEqual([]);
      // a take-in reads page after page until none waits
      const landing = folder('pages');
      expect((await takeInUploads(queue, landing, 'b')).uploads).toBe(3);
      expect((await queue.backlog('b')).waiting).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('cut short before the release, with the file not loaded yet: the next take-in keeps the file, the upload loads once', async () => {
    const { jobDir, apiDir, appId, token } = await machines();
    expect((await upload(apiDir, token, [trip(appId, 'w1', 8)])).statusCode).toBe(202);
    const queue = await UploadQueue.open(url);
    try {
      const landing = pathsFor(jobDir).landingDir;
      await expect(takeInUploads(killedBeforeRelease(queue), landing)).rejects.toThrow(/killed/);
      expect(sdkFiles(landing)).toHaveLength(1);
      expect((await queue.backlog()).waiting).toBe(1);
      await load(jobDir);
      expect(await tripsLoaded(jobDir)).toEqual(['w1']);
      expect(await sdkLoads(jobDir)).toBe(1);
      expect((await queue.backlog()).waiting).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('cut short before the release, with the file loaded since: written again, left out as byte-identical, loaded once', async () => {
    const { jobDir, apiDir, appId, token } = await machines();
    expect((await upload(apiDir, token, [trip(appId, 'v1', 8)])).statusCode).toBe(202);
    expect((await upload(apiDir, token, [trip(appId, 'v2', 9)])).statusCode).toBe(202);
    const queue = await UploadQueue.open(url);
    try {
      const landing = pathsFor(jobDir).landingDir;
      await expect(takeInUploads(killedBeforeRelease(queue), landing)).rejects.toThrow(/killed/);
      expect(sdkFiles(landing)).toHaveLength(2);
      // loaded since (named as inputs, then gone from the landing area as an archived file is)
      const files = sdkFiles(landing).map((n) => join(landing, n));
      const first = await runJobProcess('load', ['--data-dir', jobDir, ...files.flatMap((f) => ['--input', f])], {
        DATABASE_URL: url,
      });
      expect(first.code, first.stderr).toBe(0);
      for (const f of files) rmSync(f);
      expect(await tripsLoaded(jobDir)).toEqual(['v1', 'v2']);
      expect(await sdkLoads(jobDir)).toBe(2);
      expect((await queue.backlog()).waiting).toBe(2);
      // the next take-in writes both again under their names; the load's upload ledger leaves them out
      const second = await load(jobDir);
      expect(second.stderr + second.stdout).toMatch(/2 SDK upload\(s\) taken in from PostgreSQL/);
      expect((await queue.backlog()).waiting).toBe(0);
      expect(second.stderr + second.stdout).toMatch(/load: 0 file\(s\) from/);
      expect(sdkFiles(landing)).toEqual([]);
      expect(await tripsLoaded(jobDir)).toEqual(['v1', 'v2']);
      expect(await sdkLoads(jobDir)).toBe(2);
    } finally {
      await queue.close();
    }
  });

  it('PostgreSQL not answering: 503 storage_unavailable with Retry-After, never 500, and nothing in the landing area', async () => {
    // a server of this test's own, stopped while the API runs
    const own = await startPostgres();
    const ownUrl = await own.database();
    const apiDir = folder('api');
    const { appId } = await new AppStore({ dataDir: apiDir, databaseUrl: ownUrl }).add({ name: 'F', timeZone: 'UTC' });
    const passport = await PassportStore.open({ dataDir: apiDir, databaseUrl: ownUrl });
    const { token } = await passport.issueToken(appId, 'driver-1', new Date(), 3_600_000);
    const api = await createApi({ dataDir: apiDir, databaseUrl: ownUrl });
    try {
      await own.stop();
      const res = await api.app.inject({
        method: 'POST',
        url: '/v1/sdk/trips',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify([trip(appId, 'x1', 8)]),
      });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ error: 'storage_unavailable' });
      expect(res.headers['retry-after']).toBeDefined();
      expect(sdkFiles(pathsFor(apiDir).landingDir)).toEqual([]);
    } finally {
      await api.close();
      await closeStates();
    }
  });
});
