// A full disk is an outage that heals, never a loss: the data folder on a tmpfs of its own, the API
// (serve.js, two workers) and the continuous load (load.js --watch, its log on the same disk) as
// real processes, the disk filled while uploads arrive. No upload gets a 500 (503 storage_full with
// Retry-After instead), nothing valid is set aside, no temporary file stays, the watch keeps
// running, and once there is room again every upload answered 202 is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { ROOT } from '../helpers/job-process.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { tripRecord } from '../helpers/trips.js';

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** A series' value in a Prometheus text file (0 when absent). */
function series(file: string, name: string): number {
  if (!existsSync(file)) return 0;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('a full disk under the API and the continuous load', () => {
  let disk: Tmpfs | string;
  let serve: ServeProcess | undefined;
  let watch: ChildProcess | undefined;
  let metricsDir: string;
  beforeAll(() => {
    disk = mountTmpfs(160 * 1024 * 1024);
    metricsDir = mkdtempSync(join(tmpdir(), 'dds-metrics-'));
  });
  afterAll(async () => {
    watch?.kill('SIGKILL');
    serve?.child.kill('SIGKILL');
    await serve?.exited;
    if (process.env['FULL_DISK_KEEP'] && typeof disk !== 'string')
      process.stderr.write(readFileSync(join(disk.dir, 'watch.log'), 'utf8'));
    if (typeof disk !== 'string') disk.unmount();
    rmSync(metricsDir, { recursive: true, force: true });
  });

  it('refuses uploads with 503 while it is full, loses none, and serves every accepted one once there is room', async (context) => {
    if (typeof disk === 'string') return context.skip(disk);
    const full = disk;
    const dataDir = join(full.dir, 'data');
    const paths = pathsFor(dataDir);
    const apps = new AppStore(paths.appsFile);
    const { appId } = await apps.add({ name: 'full disk', timeZone: 'UTC' });
    const key = (await apps.rotateKey(appId)).apiKey;
    // the API and the watch log to the disk that fills, as the shipped crontab does; the watch's
    // metrics go elsewhere
    const apiLog = openSync(join(full.dir, 'api.log'), 'a');
    serve = await startServe(
      ['--data-dir', dataDir, '--port', String(await freePort()), '--workers', '2', '--log', 'true'],
      {},
      apiLog,
    );
    closeSync(apiLog);
    // a worker that died would be replaced: the same workers at the end say none did
    await until(() => serve?.workers().length === 2, 'both API workers');
    const workers = serve.workers().sort();
    const log = openSync(join(full.dir, 'watch.log'), 'a');
    watch = spawn(
      process.execPath,
      ['jobs/load.js', '--data-dir', dataDir, '--watch', '--poll-ms', '200', '--metrics-dir', metricsDir],
      { cwd: ROOT, stdio: ['ignore', log, log] },
    );
    closeSync(log);
    const watchMetrics = join(metricsDir, 'driving_load_watch.prom');
    const url = serve.url;
    const asKey = { authorization: `Bearer ${key}` };
    const token = (
      (await (await fetch(`${url}/v1/org-user/driver-1/token`, { method: 'POST', headers: asKey })).json()) as {
        token: string;
      }
    ).token;
    const start = Date.now() - 3 * 3600_000;
    const upload = (n: number) =>
      fetch(`${url}/v1/sdk/trips`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(
          tripRecord({
            appId: 'set-by-the-token',
            tripId: `trip-${n}`,
            start: new Date(start + n * 600_000).toISOString(),
            seconds: 300,
          }),
        ),
      });
    const served = async (n: number) =>
      (await fetch(`${url}/v1/org-user/driver-1/trip/trip-${n}`, { headers: asKey })).status === 200;
    const accepted: number[] = [];
    const statuses: number[] = [];
    const send = async (n: number) => {
      const res = await upload(n);
      statuses.push(res.status);
      if (res.status === 202) accepted.push(n);
      else {
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: string }).error).toBe('storage_full');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      return res.status;
    };

    // a first upload served: the data folder is what a running service holds
    expect(await send(0)).toBe(202);
    await until(() => served(0), 'the first upload served', 120_000);

    // room for uploads but not for a batch (its warehouse log, points, routes, a new snapshot):
    // batches fail and their files stay where they are
    const fillers = [full.fill(256 * 1024)];
    const failedBefore = series(watchMetrics, 'driving_load_batches_total{outcome="failed"}');
    for (let n = 1; n <= 4; n++) await send(n);
    await until(
      () => series(watchMetrics, 'driving_load_batches_total{outcome="failed"}') >= failedBefore + 2,
      'the watch failing batches on the full disk',
      120_000,
    );

    // no room at all: the uploads are refused with 503, and the watch cannot write its log
    fillers.push(full.fill(0));
    // and the logs' last pages too, which a line could still go into
    for (const name of ['watch.log', 'api.log']) {
      try {
        appendFileSync(join(full.dir, name), '.'.repeat(8192));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
    }
    for (let n = 5; n <= 8; n++) await send(n);
    expect(statuses.slice(5).every((s) => s === 503)).toBe(true);
    const readyz = (await (await fetch(`${url}/readyz`)).json()) as { status: string; disk: string };
    expect(readyz).toMatchObject({ status: 'ready', disk: 'full' });
    // reads go on: the published snapshot is served, the rate limits counted in memory
    for (let i = 0; i < 5; i++) expect(await served(0)).toBe(true);
    const failedFull = series(watchMetrics, 'driving_load_batches_total{outcome="failed"}');
    await until(
      () => series(watchMetrics, 'driving_load_batches_total{outcome="failed"}') > failedFull,
      'a batch on the disk without room, its log line lost',
      120_000,
    );
    expect(watch.exitCode).toBeNull();
    expect(statuses).not.toContain(500);
    expect(filesUnder(join(paths.landingDir, 'failed'))).toEqual([]);
    expect(filesUnder(paths.landingDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    // room again: the refused uploads are sent again (as the SDK does after Retry-After), and
    // every upload answered 202 is served
    for (const filler of fillers) rmSync(filler);
    for (let n = 5; n <= 8; n++) expect(await send(n)).toBe(202);
    for (const n of accepted) await until(() => served(n), `trip-${n} served`, 120_000);
    expect(accepted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(statuses).not.toContain(500);
    expect(filesUnder(join(paths.landingDir, 'failed'))).toEqual([]);
    expect(watch.exitCode).toBeNull();
    expect(serve.child.exitCode).toBeNull();
    expect(serve.workers().sort()).toEqual(workers);
    // the lines it could not write were counted, not fatal
    await until(
      () => series(watchMetrics, 'driving_load_log_write_errors_total') > 0,
      'the log lines lost counted',
      60_000,
    );
    expect(((await (await fetch(`${url}/readyz`)).json()) as { disk: string }).disk).not.toBe('full');
  });
});
