// Two cells live on one host (docs/operating.md, Cells), sharing one real PostgreSQL: each cell's
// job machine runs `load.js --watch --cell X`, its own `serve.js --cell X` and `deliver.js --cell X`;
// an API machine follows both (serve.js --follow a=... --follow b=...). SDK uploads through the API
// machine are loaded in their driver's cell only and served by it, a cell's own API answers 503
// cell_not_served for the other cell's drivers; webhooks come from both cells; the bulk export
// holds both cells' trips; a cell's watch killed with -9 mid-load loses nothing and loads nothing
// twice while the other cell goes on loading and answering; a DELETE reaches the driver's cell's
// warehouse, its publish and the API machine's copy, and the other cell purges nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AppStore } from '../../src/apps/store.js';
import { cellFolder } from '../../src/cell.js';
import { pathsFor } from '../../src/data-folder.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { closeUploadQueues } from '../../src/intake/upload-queue.js';
import { PassportStore } from '../../src/passport/store.js';
import { closeStates, openState } from '../../src/state/open.js';
import { closeSharedOutboxes } from '../../src/webhooks/open-outbox.js';
import { answer, cellJob, cellsOfDrivers, copyState, percentiles } from '../helpers/cells.js';
import { ROOT, startJob } from '../helpers/job-process.js';
import { freePort, startPostgres, type PgServer } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { tripRecord } from '../helpers/trips.js';
import { publishedRows } from '../helpers/workspace.js';

/** A wait that ends a stuck machine, not a slow one. */
const SERVED_WITHIN_MS = 120_000;

let server: PgServer;
let url: string;
let appId: string;
let apiKey: string;
let receiver: Receiver;
const dirs: string[] = [];
const serves: ServeProcess[] = [];
const children: ChildProcess[] = [];
const cellDir: Record<string, string> = {};
let apiDir: string;
let api: ServeProcess;
const own: Record<string, ServeProcess> = {};
/** Each driver's passport token, platform user id and cell. */
const drivers = new Map<string, { token: string; userId: number; cell: string }>();
/** Two drivers of each cell. */
const of: Record<string, [string, string]> = {};

interface Watch {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  log: () => string;
  /** Kills the watch with SIGKILL as soon as its log says what `pattern` matches from now on. */
  killOn: (pattern: RegExp) => void;
}
const watches: Record<string, Watch> = {};

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-cells-live-${name}-`));
  dirs.push(dir);
  return dir;
};

const env = () => ({ DATABASE_URL: url, DRIVING_FOLLOW_POLL: '200ms' });

/** A cell's continuous load, saying every line of every batch. */
function startWatch(cell: string): Watch {
  const { child } = startJob(
    'load',
    [
      '--data-dir',
      cellDir[cell] as string,
      '--cell',
      cell,
      '--watch',
      '--verbose',
      '--poll-ms',
      '200',
      '--max-rest-ms',
      '0',
    ],
    env(),
  );
  children.push(child);
  let log = '';
  let armed: { pattern: RegExp; from: number } | null = null;
  const check = () => {
    if (armed?.pattern.test(log.slice(armed.from)) && child.exitCode === null && child.signalCode === null) {
      armed = null;
      child.kill('SIGKILL');
    }
  };
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
    check();
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const watch: Watch = {
    child,
    done,
    log: () => log,
    killOn: (pattern) => {
      armed = { pattern, from: log.length };
    },
  };
  watches[cell] = watch;
  return watch;
}

/** `promise`, or an error saying what the machines said when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, what: string, ms = SERVED_WITHIN_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}\n${said()}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function startDeliverer(cell: string): void {
  const child = spawn(
    process.execPath,
    ['jobs/deliver.js', '--data-dir', cellDir[cell] as string, '--cell', cell, '--no-metrics'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env(),
        DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
        DRIVING_WEBHOOK_POLL: '50ms',
        DRIVING_WEBHOOK_LEASE_MS: '2000',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  children.push(child);
}

async function serve(dataDir: string, args: string[]): Promise<ServeProcess> {
  const s = await startServe(
    ['--data-dir', dataDir, '--port', String(await freePort()), '--workers', '1', '--no-metrics', ...args],
    env(),
  );
  serves.push(s);
  return s;
}

/** What the machines said, for a failed wait. */
const said = (): string =>
  [
    ...Object.entries(watches).map(([cell, w]) => `watch ${cell}: ${w.log().slice(-2500)}`),
    ...serves.map((s) => `serve ${s.url}: ${s.stderr().slice(-1500)}`),
  ].join('\n');

const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
let trips = 0;
/** Every record uploaded, for the reference warehouse. */
const sent: Record<string, unknown>[] = [];

/**
 * Uploads trips of a driver through a machine: each in an hour of the day of its own, so none
 * overlap, and the drivers differ in their share of low speed, as their scores do.
 */
async function upload(base: string, driver: string, tripIds: string[]): Promise<void> {
  const who = drivers.get(driver);
  if (!who) throw new Error(`no driver ${driver}`);
  // driver-N drives its first N minutes of each trip at low speed (at most 20 km/h)
  const slowFor = 60 * Number(driver.slice(-1));
  const records = tripIds.map((tripId) => {
    const at = trips++;
    return tripRecord({
      appId,
      tripId,
      userId: who.userId,
      orgUserId: driver,
      start: `${day}T${String(at % 24).padStart(2, '0')}:${String(Math.floor(at / 24) * 6).padStart(2, '0')}:00Z`,
      seconds: 300,
      speed: (i) => (i < slowFor ? 4 : 15),
    });
  });
  sent.push(...records);
  const res = await fetch(`${base}/v1/sdk/trips`, {
    method: 'POST',
    headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(records),
  });
  expect(res.status, await res.clone().text()).toBe(202);
}

/** A driver's trip ids as a machine lists them (sorted), or the status it answered instead. */
async function listed(base: string, driver: string): Promise<string[] | number> {
  const res = await fetch(`${base}/v1/org-user/${driver}/trips?startTime=${day}&endTime=${day}T23:59:59Z&limit=100`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (res.status !== 200) return res.status;
  return ((await res.json()) as { trips: { tripId: string }[] }).trips.map((t) => t.tripId).sort();
}

/** Until `base` lists every one of `expected` among the driver's trips. */
async function servedBy(base: string, driver: string, expected: string[]): Promise<void> {
  await until(
    async () => {
      const got = await listed(base, driver);
      return typeof got !== 'number' && expected.every((t) => got.includes(t));
    },
    `${expected.join(', ')} of ${driver} served by ${base}`,
    SERVED_WITHIN_MS,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${said()}`);
  });
}

/** The trip ids a data folder (a cell, or a copy of one) has published, one per row. */
const published = async (dataDir: string): Promise<string[]> =>
  (await publishedRows(pathsFor(dataDir), 'trips', 'trip_id', [])).map((r) => String(r['trip_id']));

/** Rows of a driver in every slot file of a published folder (a slot being replaced holds nobody). */
async function rowsInSlots(dataDir: string, orgUserId: string): Promise<number> {
  const dir = pathsFor(dataDir).publishedDir;
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir).filter((f) => /^slot-[ab]\.duckdb$/.test(f))) {
    const db = await openDatabase(join(dir, name), { readOnly: true }).catch(() => null);
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

/**
 * GETs a path of a machine one request after another until stopped: what it answered other than
 * 200 (or a transport error), as a client that keeps asking sees it.
 */
function keepAsking(base: string, path: string): { stop: () => Promise<{ ok: number; failed: string[] }> } {
  let stopped = false;
  const out = { ok: 0, failed: [] as string[] };
  const loop = (async () => {
    while (!stopped) {
      try {
        const res = await fetch(`${base}${path}`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(30_000),
        });
        const body = await res.text();
        if (res.status === 200) out.ok++;
        else out.failed.push(`${res.status} ${body.slice(0, 200)}`);
      } catch (error) {
        out.failed.push(String(error));
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return out;
    },
  };
}

const tripCreated = (): string[] =>
  receiver.received
    .map((got) => JSON.parse(got.rawBody.toString('utf8')) as { type: string; data: { tripId: string } })
    .filter((e) => e.type === 'trip.created')
    .map((e) => e.data.tripId);

beforeAll(async () => {
  server = await startPostgres();
  url = await server.database();
  for (const cell of ['a', 'b']) cellDir[cell] = folder(cell);
  apiDir = folder('api');
  const store = new AppStore({ dataDir: cellDir['a'] as string, databaseUrl: url });
  const added = await store.add({ name: 'Fleet', timeZone: 'UTC' });
  appId = added.appId;
  apiKey = added.apiKey;
  receiver = await startReceiver();
  await store.setWebhook(appId, receiver.url);
  // each cell's watch registers its cell at its start: the accounts made after are spread over both
  for (const cell of ['a', 'b']) startWatch(cell);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await until(
      async () => (await c.query('select name from cells order by 1')).rows.map((r) => r.name).join() === 'a,b',
      'both cells registered',
      SERVED_WITHIN_MS,
    );
  } finally {
    await c.end();
  }
  const passport = await PassportStore.open({ dataDir: cellDir['a'] as string, databaseUrl: url });
  const tokens = new Map<string, { token: string; userId: number }>();
  for (const driver of ['driver-1', 'driver-2', 'driver-3', 'driver-4']) {
    const issued = await passport.issueToken(appId, driver, new Date(), 24 * 3_600_000);
    tokens.set(driver, { token: issued.token, userId: issued.platformUserId });
  }
  const cells = await cellsOfDrivers(url, appId);
  for (const [driver, t] of tokens) drivers.set(driver, { ...t, cell: cells.get(driver) as string });
  for (const cell of ['a', 'b']) {
    const mine = [...drivers].filter(([, d]) => d.cell === cell).map(([name]) => name);
    expect(mine.length, `drivers of cell ${cell}`).toBe(2);
    of[cell] = mine as [string, string];
  }
  for (const cell of ['a', 'b']) startDeliverer(cell);
  api = await serve(apiDir, ['--follow', `a=${cellDir['a']}`, '--follow', `b=${cellDir['b']}`]);
  for (const cell of ['a', 'b']) own[cell] = await serve(cellDir[cell] as string, ['--cell', cell]);
  await until(
    async () =>
      (await fetch(`${api.url}/readyz`)).status === 200 &&
      (await fetch(`${own['a']?.url}/readyz`)).status === 200 &&
      (await fetch(`${own['b']?.url}/readyz`)).status === 200,
    'every API ready',
    SERVED_WITHIN_MS,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${said()}`);
  });
}, 300_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(serves.map((s) => s.exited));
  await Promise.all(Object.values(watches).map((w) => w.done));
  await receiver?.close();
  await closeSharedOutboxes();
  await closeUploadQueues();
  await closeStates();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('two cells live, an API machine following both', () => {
  it("loads each upload through the API machine in its driver's cell only; a cell's own API refuses the other cell's drivers", async () => {
    const [a1, a2] = of['a'] as [string, string];
    const [b1, b2] = of['b'] as [string, string];
    await upload(api.url, a1, ['a1-1', 'a1-2']);
    await upload(api.url, b1, ['b1-1', 'b1-2']);
    await upload(api.url, a2, ['a2-1']);
    await upload(api.url, b2, ['b2-1']);
    await servedBy(api.url, a1, ['a1-1', 'a1-2']);
    await servedBy(api.url, a2, ['a2-1']);
    await servedBy(api.url, b1, ['b1-1', 'b1-2']);
    await servedBy(api.url, b2, ['b2-1']);
    expect((await published(cellDir['a'] as string)).sort()).toEqual(['a1-1', 'a1-2', 'a2-1']);
    expect((await published(cellDir['b'] as string)).sort()).toEqual(['b1-1', 'b1-2', 'b2-1']);
    // each cell's own API answers its drivers and refuses the other cell's
    expect(await listed(own['a']?.url as string, a1)).toEqual(['a1-1', 'a1-2']);
    expect(await listed(own['b']?.url as string, b1)).toEqual(['b1-1', 'b1-2']);
    for (const [cell, driver] of [
      ['a', b1],
      ['b', a1],
    ] as const) {
      const res = await fetch(`${own[cell]?.url}/v1/org-user/${driver}/trips?startTime=${day}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 50307, error: 'cell_not_served' });
    }
  });

  it('sends trip.created webhooks of the drivers of both cells', async () => {
    const expected = ['a1-1', 'a1-2', 'a2-1', 'b1-1', 'b1-2', 'b2-1'];
    await until(
      () => expected.every((t) => tripCreated().includes(t)),
      'trip.created of both cells delivered',
      SERVED_WITHIN_MS,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: got ${tripCreated().join(', ')}\n${said()}`);
    });
  });

  it("streams both cells' trips in the bulk export", async () => {
    const res = await fetch(`${api.url}/v1/exports/trips`, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/x-ndjson' },
    });
    expect(res.status).toBe(200);
    const ids = (await res.text())
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as { tripId: string }).tripId)
      .sort();
    const both = [...(await published(cellDir['a'] as string)), ...(await published(cellDir['b'] as string))].sort();
    expect(ids).toEqual(both);
    expect(ids).toEqual(['a1-1', 'a1-2', 'a2-1', 'b1-1', 'b1-2', 'b2-1']);
  });

  it('a cell killed with -9 mid-load loses nothing and loads nothing twice; the other cell never stops', async () => {
    const [a1] = of['a'] as [string, string];
    const [b1] = of['b'] as [string, string];
    const range = `?startTime=${day}&endTime=${day}T23:59:59Z`;
    const asking = [
      keepAsking(own['b']?.url as string, `/v1/org-user/${b1}/trips${range}`),
      keepAsking(api.url, `/v1/org-user/${b1}/trips${range}`),
      keepAsking(api.url, `/v1/org-user/${a1}/trips${range}`),
    ];
    // cell a's watch killed once it has listed the batch it took in, before it derives it
    (watches['a'] as Watch).killOn(/load: [1-9]\d* file\(s\) from/);
    await upload(api.url, a1, ['k-1', 'k-2']);
    expect(await within((watches['a'] as Watch).done, "cell a's watch killed as it lists its batch")).toMatchObject({
      signal: 'SIGKILL',
    });
    // cell a down: its uploads are accepted and wait; cell b loads and serves its own meanwhile
    await upload(api.url, a1, ['k-3']);
    await upload(api.url, b1, ['during-1']);
    await servedBy(api.url, b1, ['during-1']);
    await servedBy(own['b']?.url as string, b1, ['during-1']);
    // started again, killed once what waited is in its warehouse, before it is published
    startWatch('a').killOn(/load: publishing/);
    expect(await within((watches['a'] as Watch).done, "cell a's watch killed as it publishes")).toMatchObject({
      signal: 'SIGKILL',
    });
    // started again with nothing new to take in: what its warehouse holds is published
    startWatch('a');
    await servedBy(api.url, a1, ['k-1', 'k-2', 'k-3']);
    await upload(api.url, b1, ['after-1']);
    await servedBy(api.url, b1, ['after-1']);
    const answers = await Promise.all(asking.map((k) => k.stop()));
    for (const got of answers) {
      expect(got.failed).toEqual([]);
      expect(got.ok).toBeGreaterThan(0);
    }
    // every upload answered 202 is published once, in its driver's cell only
    const inA = await published(cellDir['a'] as string);
    expect(inA.sort()).toEqual(['a1-1', 'a1-2', 'a2-1', 'k-1', 'k-2', 'k-3']);
    expect((await published(cellDir['b'] as string)).sort()).toEqual(['after-1', 'b1-1', 'b1-2', 'b2-1', 'during-1']);
    expect(await listed(api.url, a1)).toEqual(['a1-1', 'a1-2', 'k-1', 'k-2', 'k-3']);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      expect((await c.query('select count(*)::int as n from uploads.waiting')).rows[0]?.n).toBe(0);
    } finally {
      await c.end();
    }
  });

  it("ranks the day's percentiles over both running cells as one warehouse does, the first cell scored ranked again by its watch", async () => {
    const date = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
    // the reference: one warehouse of its own database, the same apps and accounts, every record sent
    const refUrl = await server.database();
    const ref = folder('ref');
    await openState({ dataDir: ref, databaseUrl: refUrl });
    await copyState(url, refUrl);
    mkdirSync(pathsFor(ref).landingDir, { recursive: true });
    writeFileSync(join(pathsFor(ref).landingDir, 'sent.ndjson'), sent.map((r) => `${JSON.stringify(r)}\n`).join(''));
    await cellJob('load', ref, refUrl);
    await cellJob('score', ref, refUrl, '--date', date);
    const whole = await percentiles([ref]);
    expect(whole.length).toBe(8);
    expect(new Set(whole.map((r) => r[2])).size).toBeGreaterThan(1);
    // the cells scored while their watches run: b first, ranked against its own drivers only until
    // a posts its counts; then b's watch ranks again and publishes, with no upload to wake it
    await cellJob('score', cellDir['b'] as string, url, '--cell', 'b', '--date', date);
    await cellJob('score', cellDir['a'] as string, url, '--cell', 'a', '--date', date);
    let cells: unknown[][] = [];
    await until(
      async () => {
        cells = await percentiles([cellDir['a'] as string, cellDir['b'] as string]);
        return JSON.stringify(cells) === JSON.stringify(whole);
      },
      "both cells' published percentiles ranked over both",
      SERVED_WITHIN_MS,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(cells)} against ${JSON.stringify(whole)}\n${said()}`);
    });
    // and the API machine answers each driver's score as the one warehouse does
    const one = await serve(ref, []);
    for (const driver of drivers.keys()) {
      const path = `/v1/org-user/${driver}/safety-score?interval=30`;
      const want = await answer(one.url, apiKey, path);
      expect(want.status).toBe(200);
      await until(
        async () => JSON.stringify(await answer(api.url, apiKey, path)) === JSON.stringify(want),
        `${driver}'s score served by the API machine as by the one warehouse`,
        SERVED_WITHIN_MS,
      ).catch(async (error: Error) => {
        throw new Error(
          `${error.message}: ${JSON.stringify(await answer(api.url, apiKey, path))} against ${JSON.stringify(want)}`,
        );
      });
    }
  });

  it("a DELETE through the API machine reaches the driver's cell and the API machine's copy within a minute; the other cell purges nothing", async () => {
    const [, b2] = of['b'] as [string, string];
    const copyOfB = cellFolder(apiDir, 'b');
    expect(await rowsInSlots(cellDir['b'] as string, b2)).toBeGreaterThan(0);
    expect(await rowsInSlots(copyOfB, b2)).toBeGreaterThan(0);
    const res = await fetch(`${api.url}/v1/org-user/${b2}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status, await res.text()).toBe(200);
    await until(
      async () => (await rowsInSlots(cellDir['b'] as string, b2)) === 0 && (await rowsInSlots(copyOfB, b2)) === 0,
      `${b2} erased from cell b's publish and the API machine's copy`,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${said()}`);
    });
    expect(await listed(api.url, b2)).toBe(404);
    expect(await rowsInSlots(copyOfB, of['b']?.[0] as string)).toBeGreaterThan(0);
    // the watches stopped, their warehouses are read: the driver's trips gone from cell b's, and
    // cell a, whose driver it was not, purged nobody
    for (const cell of ['a', 'b']) {
      const w = watches[cell] as Watch;
      w.child.kill('SIGTERM');
      expect(await w.done).toMatchObject({ code: 0 });
    }
    const userId = drivers.get(b2)?.userId as number;
    const warehouse = async (cell: string, sql: string, params: Record<string, unknown> = {}) => {
      const db = await openDatabase(pathsFor(cellDir[cell] as string).warehouseFile, { readOnly: true });
      try {
        return await query(db.connection, sql, params);
      } finally {
        db.close();
      }
    };
    expect(await warehouse('b', 'select trip_id from trips where user_id = $user', { user: userId })).toEqual([]);
    expect(await warehouse('b', 'select org_user_id from trips order by 1')).toEqual(
      ['after-1', 'b1-1', 'b1-2', 'during-1'].map(() => ({ org_user_id: of['b']?.[0] })),
    );
    expect((await warehouse('b', 'select user_id from purged_users')).map((r) => Number(r['user_id']))).toEqual([
      userId,
    ]);
    expect(await warehouse('a', 'select user_id from purged_users')).toEqual([]);
    expect((await warehouse('a', 'select trip_id from trips order by 1')).map((r) => r['trip_id'])).toEqual([
      'a1-1',
      'a1-2',
      'a2-1',
      'k-1',
      'k-2',
      'k-3',
    ]);
  });
});
