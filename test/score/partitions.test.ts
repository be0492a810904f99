// Past one machine the work partitions by app and user (docs/scaling.md). Simulated here: the same
// records split by user into two data folders, each loaded and scored by its own processes, give
// the same published trips, events, statistics and scores as one folder that holds them all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGenerate } from '../../src/jobs/generate.js';
import { pathsFor } from '../../src/data-folder.js';
import { copyState, publishedRows, workspace, type Workspace } from '../helpers/workspace.js';
import { oneFile } from '../helpers/one-file.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const SCORE_DATE = '2026-11-21';

const TABLES: Array<[table: string, orderBy: string, skip: string[]]> = [
  ['trips', 'app_id, trip_id', ['version']],
  ['trip_events', 'app_id, trip_id, event_index', ['version']],
  ['stats_daily', 'app_id, user_id, stat_date', ['version']],
  // the percentile ranks a driver among all the app's drivers: across partitions (checked below)
  ['safety_scores', 'app_id, user_id, evaluation_date, interval_days', ['version', 'evaluated_at', 'percentile']],
];

let whole: Workspace;
const parts: string[] = [];

async function job(dataDir: string, name: string, ...args: string[]): Promise<void> {
  await run(process.execPath, [join(repo, 'jobs', `${name}.js`), '--data-dir', dataDir, ...args], {
    env: { ...process.env, DRIVING_LOAD_CONCURRENCY: '1' },
  });
}

/** Sums of doubles depend on the order DuckDB adds them in: compared to 9 significant digits. */
const settle = (row: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [
      k,
      typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v,
    ]),
  );

async function published(
  dataDir: string,
  table: string,
  orderBy: string,
  skip: string[],
): Promise<Record<string, unknown>[]> {
  return (await publishedRows(pathsFor(dataDir), table, orderBy, skip)).map(settle);
}

beforeAll(async () => {
  whole = await workspace('America/New_York');
  const gen = join(whole.dir, 'gen');
  await runGenerate({
    dataDir: whole.dir,
    users: 12,
    days: 6,
    seed: 11,
    format: 'ndjson',
    endDate: '2026-11-20',
    out: gen,
  });
  // the days as one file: what is compared here does not depend on the days coming in separate files
  oneFile(gen);
  // two partitions by user: each its own data folder with the same apps, its own processes
  for (const k of [0, 1]) {
    const dir = join(whole.dir, `part-${k}`);
    mkdirSync(join(dir, 'in'), { recursive: true });
    copyState(whole.dir, dir);
    parts.push(dir);
  }
  for (const name of readdirSync(gen).sort()) {
    const lines = readFileSync(join(gen, name), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    for (const k of [0, 1]) {
      const mine = lines.filter((l) => (JSON.parse(l) as { platformUserId: number }).platformUserId % 2 === k);
      writeFileSync(join(parts[k] as string, 'in', name), mine.map((l) => `${l}\n`).join(''));
    }
  }
  await Promise.all([
    (async () => {
      await job(whole.dir, 'load', '--input', gen);
      await job(whole.dir, 'score', '--date', SCORE_DATE);
    })(),
    ...parts.map(async (dir) => {
      await job(dir, 'load', '--input', join(dir, 'in'));
      await job(dir, 'score', '--date', SCORE_DATE);
    }),
  ]);
}, 300_000);
afterAll(() => whole?.cleanup());

describe('two user partitions, each on its own', () => {
  it.each(TABLES)('publish the same %s as one folder with every user', async (table, orderBy, skip) => {
    const single = await published(whole.dir, table, orderBy, skip);
    const union = [
      ...(await published(parts[0] as string, table, orderBy, skip)),
      ...(await published(parts[1] as string, table, orderBy, skip)),
    ];
    const key = (r: Record<string, unknown>) =>
      orderBy
        .split(', ')
        .map((c) => String(r[c]).padStart(24, '0'))
        .join('|');
    union.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    single.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    expect(single.length).toBeGreaterThan(0);
    // each partition holds some of the users, none holds them all
    expect((await published(parts[0] as string, table, orderBy, skip)).length).toBeLessThan(single.length);
    expect(union).toEqual(single);
  });
});

describe('the percentile across partitions', () => {
  it("is each partition's own rank, and the rank over every partition's scores is the one folder's", async () => {
    const cols = 'app_id, user_id, evaluation_date, interval_days, safety_score, percentile';
    const order = 'app_id, evaluation_date, interval_days, user_id';
    const single = (await published(whole.dir, 'safety_scores', order, [])).map((r) =>
      Object.fromEntries(cols.split(', ').map((c) => [c, r[c]])),
    );
    const union = (await Promise.all(parts.map((dir) => published(dir, 'safety_scores', order, [])))).flat();
    // percentile from the union's scores, by the definition: per app, date and interval, rank by score (ties lowest), 100 alone
    const group = (r: Record<string, unknown>) => `${r['app_id']}|${r['evaluation_date']}|${r['interval_days']}`;
    const ranked = union.map((r) => {
      const peers = union.filter((p) => group(p) === group(r)).map((p) => Number(p['safety_score']));
      const below = peers.filter((x) => x < Number(r['safety_score'])).length;
      return {
        key: `${group(r)}|${r['user_id']}`,
        percentile: peers.length === 1 ? 100 : Math.round((10_000 * below) / (peers.length - 1)) / 100,
      };
    });
    const byKey = new Map(ranked.map((r) => [r.key, r.percentile]));
    for (const r of single)
      expect(r['percentile'], `${group(r)}|${r['user_id']}`).toBe(byKey.get(`${group(r)}|${r['user_id']}`));
    // a partition alone ranks its drivers among fewer: some differ
    expect(union.some((r) => r['percentile'] !== byKey.get(`${group(r)}|${r['user_id']}`))).toBe(true);
  });
});
