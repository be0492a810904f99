// Cells on one host (docs/operating.md, Cells): two job machines, each its own data folder and
// warehouse (load.js, score.js with --cell), sharing one real PostgreSQL, and an API machine that
// follows both (serve.js --follow a=... --follow b=...). One partner file holding every driver is
// dropped on cell a only: each record is loaded once, in its driver's cell, and the API answers,
// route for route and percentile included, exactly what one warehouse holding every record answers
// (a reference data folder without cells, with the same apps and accounts in a database of its own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { closeUploadQueues } from '../../src/intake/upload-queue.js';
import { closeStates, openState } from '../../src/state/open.js';
import {
  accountsOf,
  answer,
  cellJob,
  compareEveryRoute,
  copyState,
  percentiles,
  RANGE,
  cellsAndReferenceApis,
} from '../helpers/cells.js';
import { oneFile } from '../helpers/one-file.js';
import { freePort, startPostgres, type PgServer } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { ROOT } from '../helpers/job-process.js';
import { publishedRows } from '../helpers/workspace.js';

const SCORE_DATE = '2026-11-21';

let server: PgServer;
let url: string;
let refUrl: string;
let appId: string;
let apiKey: string;
const dirs: string[] = [];
const serves: ServeProcess[] = [];
let cellA: string;
let cellB: string;
let ref: string;
let api: ServeProcess;
let one: ServeProcess;
let drivers: string[] = [];
let haproxy: ChildProcess | null = null;
const HAPROXY = process.env['DRIVING_HAPROXY'] ?? '/usr/sbin/haproxy';

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-cells-${name}-`));
  dirs.push(dir);
  return dir;
};

const job = cellJob;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.database();
  refUrl = await server.database();
  cellA = folder('a');
  cellB = folder('b');
  ref = folder('ref');
  const added = await new AppStore({ dataDir: cellA, databaseUrl: url }).add({
    name: 'Fleet',
    timeZone: 'America/New_York',
  });
  appId = added.appId;
  apiKey = added.apiKey;
  // each cell's first job registers it
  await job('load', cellA, url, '--cell', 'a');
  await job('load', cellB, url, '--cell', 'b');
  // the drivers' accounts, each given a cell as it is made; their trips as one partner file
  const gen = folder('gen');
  await job(
    'generate',
    cellA,
    url,
    '--cell',
    'a',
    '--users',
    '12',
    '--days',
    '6',
    '--end-date',
    '2026-11-20',
    '--seed',
    '11',
    '--out',
    gen,
  );
  const file = oneFile(gen);
  // and days of Parquet files, dropped on cell b
  const gen2 = folder('gen2');
  await job(
    'generate',
    cellA,
    url,
    '--cell',
    'a',
    '--users',
    '12',
    '--days',
    '2',
    '--end-date',
    '2026-11-13',
    '--seed',
    '12',
    '--format',
    'parquet',
    '--out',
    gen2,
  );
  const parquet = readdirSync(gen2).filter((n) => n.endsWith('.parquet'));
  expect(parquet.length).toBe(2);
  // the reference: one warehouse, the same apps and accounts, every record
  await openState({ dataDir: ref, databaseUrl: refUrl });
  await copyState(url, refUrl);
  mkdirSync(pathsFor(ref).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(ref).landingDir, 'partner.ndjson'));
  for (const n of parquet) copyFileSync(join(gen2, n), join(pathsFor(ref).landingDir, n));
  await job('load', ref, refUrl);
  await job('score', ref, refUrl, '--date', SCORE_DATE);
  // the cells: the partner file dropped on cell a only
  mkdirSync(pathsFor(cellA).landingDir, { recursive: true });
  copyFileSync(file, join(pathsFor(cellA).landingDir, 'partner.ndjson'));
  mkdirSync(pathsFor(cellB).landingDir, { recursive: true });
  for (const n of parquet) copyFileSync(join(gen2, n), join(pathsFor(cellB).landingDir, n));
  await job('load', cellA, url, '--cell', 'a');
  await job('load', cellB, url, '--cell', 'b');
  // cell b's Parquet files sent cell a's drivers' records to cell a
  await job('load', cellA, url, '--cell', 'a');
  await job('score', cellA, url, '--cell', 'a', '--date', SCORE_DATE);
  await job('score', cellB, url, '--cell', 'b', '--date', SCORE_DATE);
  // cell a ranks again against cell b's counts, posted after its own score
  await job('load', cellA, url, '--cell', 'a');
  drivers = await accountsOf(url, appId);
  ({ api, one } = await cellsAndReferenceApis(folder('api'), { a: cellA, b: cellB }, url, ref, refUrl));
  serves.push(api, one);
}, 600_000);

afterAll(async () => {
  haproxy?.kill('SIGKILL');
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(serves.map((s) => s.exited));
  await closeUploadQueues();
  await closeStates();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('two cells beside one warehouse', () => {
  it('loads each record of a partner file dropped on one cell once, in its driver cell', async () => {
    const users = async (dir: string) =>
      new Set((await publishedRows(pathsFor(dir), 'trips', 'user_id', [])).map((r) => Number(r['user_id'])));
    const [a, b, all] = await Promise.all([users(cellA), users(cellB), users(ref)]);
    expect(a.size + b.size).toBe(all.size);
    expect([...a].filter((u) => b.has(u))).toEqual([]);
    expect(a.size).toBeGreaterThanOrEqual(all.size / 5);
    expect(b.size).toBeGreaterThanOrEqual(all.size / 5);
    const trips = async (dir: string) => (await publishedRows(pathsFor(dir), 'trips', 'trip_id', [])).length;
    expect((await trips(cellA)) + (await trips(cellB))).toBe(await trips(ref));
    for (const dir of [cellA, cellB])
      expect(readdirSync(pathsFor(dir).landingDir).filter((n) => /\.(ndjson|parquet)$/.test(n))).toEqual([]);
  });

  it('answers every route for every driver as the one warehouse does, percentile included', async () => {
    expect(drivers.length).toBe(12);
    const compared = await compareEveryRoute(one.url, api.url, apiKey, drivers);
    expect(compared).toBeGreaterThan(100);
  });

  it('ranks the percentile among the drivers of both cells', async () => {
    const whole = await percentiles([ref]);
    expect(await percentiles([cellA, cellB])).toEqual(whole);
    expect(whole.some((r) => r[2] !== null && r[2] !== 100)).toBe(true);
  });

  it('sends a request to a machine holding its driver cell when each API machine holds one (HAProxy, deploy/haproxy-cells.cfg)', async () => {
    if (!existsSync(HAPROXY)) throw new Error(`HAProxy is not installed (${HAPROXY}): apt-get install haproxy`);
    const [frontPort, cellsPort] = [await freePort(), await freePort()];
    const env = {
      DATABASE_URL: url,
      DRIVING_FOLLOW_POLL: '200ms',
      DRIVING_CELL_ROUTER: `http://127.0.0.1:${cellsPort}`,
    };
    const machine = async (cell: string, dir: string) => {
      const s = await startServe(
        [
          '--data-dir',
          folder(`api-${cell}`),
          '--port',
          '0',
          '--workers',
          '1',
          '--no-metrics',
          '--follow',
          `${cell}=${dir}`,
        ],
        env,
      );
      serves.push(s);
      return s;
    };
    const [onlyA, onlyB] = [await machine('a', cellA), await machine('b', cellB)];
    const hostA = new URL(onlyA.url).host;
    const hostB = new URL(onlyB.url).host;
    const text = readFileSync(join(ROOT, 'deploy', 'haproxy-cells.cfg'), 'utf8');
    expect(text).toContain('bind :8080');
    const cfg = join(folder('haproxy'), 'haproxy.cfg');
    writeFileSync(
      cfg,
      text
        .replace('bind :8080', `bind 127.0.0.1:${frontPort}`)
        .replace('bind 10.0.1.10:8081', `bind 127.0.0.1:${cellsPort}`)
        .replace(/10\.0\.1\.2[12]:8080/g, hostA)
        .replace(/10\.0\.1\.2[34]:8080/g, hostB),
    );
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'ignore'] });
    const front = `http://127.0.0.1:${frontPort}`;
    await until(
      async () =>
        (await fetch(`${onlyA.url}/readyz`)).status === 200 &&
        (await fetch(`${onlyB.url}/readyz`)).status === 200 &&
        (await fetch(`${front}/readyz`).catch(() => null))?.status === 200,
      'both API machines and HAProxy ready',
    );
    // every driver through the front door, twice (round robin: each request once on each machine)
    for (const driver of drivers) {
      for (const path of [
        `/v1/org-user/${driver}/trips?${RANGE}&limit=50`,
        `/v1/org-user/${driver}/safety-score?interval=30`,
      ]) {
        const want = await answer(api.url, apiKey, path);
        expect({ path, ...(await answer(front, apiKey, path)) }).toEqual({ path, ...want });
        expect({ path, ...(await answer(front, apiKey, path)) }).toEqual({ path, ...want });
      }
    }
    // a machine asked directly for a driver of the other cell, by the cell door's header: it does
    // not send it on again
    const other = async (m: ServeProcess, cell: string) => {
      for (const driver of drivers) {
        const res = await fetch(`${m.url}/v1/org-user/${driver}/safety-score?interval=30`, {
          headers: { authorization: `Bearer ${apiKey}`, 'x-driving-cell': cell },
        });
        if (res.status === 503) return (await res.json()) as { error: string; code: number };
      }
      return null;
    };
    expect(await other(onlyA, 'b')).toMatchObject({ error: 'cell_not_served', code: 50307 });
  });
});
