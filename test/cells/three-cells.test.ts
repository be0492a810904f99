// Three cells on one host (docs/operating.md, Cells) beside one warehouse: cells a, b and c are job
// machines, each its own data folder and warehouse, sharing one real PostgreSQL; an API machine
// follows all three. A partner file of the first days is dropped on cell b, one of the later days
// on cell c: each record is loaded once, in its driver's cell (a driver of b has trips in both
// files, so c forwards to b what b already holds days of), and the API answers every route for
// every driver exactly as a reference warehouse holding every record does, percentile included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { closeUploadQueues } from '../../src/intake/upload-queue.js';
import { closeStates, openState } from '../../src/state/open.js';
import {
  accountsOf,
  cellJob as job,
  cellsOfDrivers,
  compareEveryRoute,
  copyState,
  percentiles,
  cellsAndReferenceApis,
} from '../helpers/cells.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { publishedRows } from '../helpers/workspace.js';

const SCORE_DATE = '2026-11-21';
const CELLS = ['a', 'b', 'c'] as const;
const DRIVERS = 15;

let server: PgServer;
let url: string;
let refUrl: string;
let appId: string;
let apiKey: string;
const dirs: string[] = [];
const serves: ServeProcess[] = [];
const cell: Record<string, string> = {};
let ref: string;
let api: ServeProcess;
let one: ServeProcess;
let drivers: string[] = [];

const folder = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-cells3-${name}-`));
  dirs.push(dir);
  return dir;
};

/** The generator's day files named, joined into one file in `to`'s landing area. */
function drop(gen: string, days: string[], dataDir: string, name: string): void {
  const landing = pathsFor(dataDir).landingDir;
  mkdirSync(landing, { recursive: true });
  const text = days.map((n) => readFileSync(join(gen, n), 'utf8')).map((t) => (t.endsWith('\n') ? t : `${t}\n`));
  writeFileSync(join(landing, name), text.join(''));
}

const users = async (dir: string): Promise<Set<number>> =>
  new Set((await publishedRows(pathsFor(dir), 'trips', 'user_id', [])).map((r) => Number(r['user_id'])));
const tripIds = async (dir: string): Promise<string[]> =>
  (await publishedRows(pathsFor(dir), 'trips', 'trip_id', [])).map((r) => String(r['trip_id']));

beforeAll(async () => {
  server = await startPostgres();
  url = await server.database();
  refUrl = await server.database();
  for (const name of CELLS) cell[name] = folder(name);
  ref = folder('ref');
  const added = await new AppStore({ dataDir: cell['a'] as string, databaseUrl: url }).add({
    name: 'Fleet',
    timeZone: 'America/New_York',
  });
  appId = added.appId;
  apiKey = added.apiKey;
  // each cell's first job registers it, so the accounts made next are spread over the three
  for (const name of CELLS) await job('load', cell[name] as string, url, '--cell', name);
  const gen = folder('gen');
  await job(
    'generate',
    cell['a'] as string,
    url,
    '--cell',
    'a',
    '--users',
    String(DRIVERS),
    '--days',
    '5',
    '--end-date',
    '2026-11-20',
    '--seed',
    '23',
    '--out',
    gen,
  );
  const days = readdirSync(gen)
    .filter((n) => n.endsWith('.ndjson'))
    .sort();
  expect(days.length).toBe(5);
  const early = days.slice(0, 3);
  const late = days.slice(3);
  // the reference: one warehouse, the same apps and accounts, both files
  await openState({ dataDir: ref, databaseUrl: refUrl });
  await copyState(url, refUrl);
  drop(gen, early, ref, 'partner-early.ndjson');
  drop(gen, late, ref, 'partner-late.ndjson');
  await job('load', ref, refUrl);
  await job('score', ref, refUrl, '--date', SCORE_DATE);
  // the cells: the early days dropped on b, the later on c; each load forwards what is not its own
  drop(gen, early, cell['b'] as string, 'partner-early.ndjson');
  drop(gen, late, cell['c'] as string, 'partner-late.ndjson');
  await job('load', cell['b'] as string, url, '--cell', 'b');
  await job('load', cell['c'] as string, url, '--cell', 'c');
  for (const name of CELLS) await job('load', cell[name] as string, url, '--cell', name);
  for (const name of CELLS) await job('score', cell[name] as string, url, '--cell', name, '--date', SCORE_DATE);
  // a and b rank again against the counts posted after their own score
  for (const name of ['a', 'b']) await job('load', cell[name] as string, url, '--cell', name);
  drivers = await accountsOf(url, appId);
  ({ api, one } = await cellsAndReferenceApis(
    folder('api'),
    Object.fromEntries(CELLS.map((name) => [name, cell[name] as string])),
    url,
    ref,
    refUrl,
  ));
  serves.push(api, one);
}, 600_000);

afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await Promise.all(serves.map((s) => s.exited));
  await closeUploadQueues();
  await closeStates();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('three cells beside one warehouse', () => {
  it('loads each record of partner files dropped on two cells once, in its driver cell', async () => {
    expect(drivers.length).toBe(DRIVERS);
    const given = await cellsOfDrivers(url, appId);
    const all = await users(ref);
    const held = await Promise.all(CELLS.map((name) => users(cell[name] as string)));
    for (const [i, name] of CELLS.entries()) {
      // the least-loaded rule spreads fifteen new accounts five a cell
      expect([...given.values()].filter((c) => c === name).length).toBe(DRIVERS / CELLS.length);
      expect((held[i] as Set<number>).size).toBeGreaterThan(0);
    }
    // no driver in two cells, every driver in one
    const union = held.flatMap((s) => [...s]);
    expect(new Set(union).size).toBe(union.length);
    expect(union.sort((x, y) => x - y)).toEqual([...all].sort((x, y) => x - y));
    // each trip once: the cells' trips together are the reference's
    const trips = (await Promise.all(CELLS.map((name) => tripIds(cell[name] as string)))).flat().sort();
    expect(new Set(trips).size).toBe(trips.length);
    expect(trips).toEqual((await tripIds(ref)).sort());
    // nothing left waiting in a landing area
    for (const name of CELLS)
      expect(readdirSync(pathsFor(cell[name] as string).landingDir).filter((n) => n.endsWith('.ndjson'))).toEqual([]);
  });

  it('answers every route for every driver as the one warehouse does, percentile included', async () => {
    const compared = await compareEveryRoute(one.url, api.url, apiKey, drivers);
    expect(compared).toBeGreaterThan(DRIVERS * 7);
  });

  it("exports every cell's trips in the bulk export, each as the one warehouse exports it", async () => {
    const exported = async (base: string): Promise<string[]> => {
      const res = await fetch(`${base}/v1/exports/trips`, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/x-ndjson' },
      });
      expect(res.status).toBe(200);
      // a cell at a time: the same lines, in another order
      return (await res.text())
        .split('\n')
        .filter((l) => l !== '')
        .sort();
    };
    const want = await exported(one.url);
    expect(want.length).toBe((await tripIds(ref)).length);
    expect(await exported(api.url)).toEqual(want);
  });

  it('ranks the percentile among the drivers of all three cells', async () => {
    const whole = await percentiles([ref]);
    expect(await percentiles(CELLS.map((name) => cell[name] as string))).toEqual(whole);
    expect(whole.some((r) => r[2] !== null && r[2] !== 100)).toBe(true);
  });
});
