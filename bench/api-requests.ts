import { pathsFor } from '../src/data-folder.js';
import { openDatabase } from '../src/db/open.js';
import { queryFile } from '../src/db/sql.js';
import { addDays } from '../src/time.js';

/** Operations 1-4 of the interface and the score's history, as the api stage names them. */
export const OPERATIONS = [
  '1 trip list',
  '2 trip detail',
  '3 statistics',
  '4 safety score',
  '4h score history',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/**
 * Request paths for each operation, over sampled users and their real trips, with the query
 * varied the way integrators vary it (last week / month / quarter, day / week / month statistics,
 * both score intervals, the score explained (the default) and not, its history over the last
 * month, quarter and year). Read from the warehouse (read-only; no job may be running).
 *
 * @example const paths = await requestPaths(dir, '2026-11-20', 42); paths.get('2 trip detail')
 */
export async function requestPaths(dataDir: string, lastDay: string, seed: number): Promise<Map<Operation, string[]>> {
  const db = await openDatabase(pathsFor(dataDir).warehouseFile, { readOnly: true });
  let rows: Record<string, unknown>[];
  try {
    rows = await queryFile(db.connection, 'tools/bench/api_sample', { users: 2_000, trips_per_user: 2, seed });
  } finally {
    db.close();
  }
  if (rows.length === 0) throw new Error(`no trips in ${dataDir} to request`);
  const user = (r: Record<string, unknown>): string => `/v1/org-user/${encodeURIComponent(String(r['org_user_id']))}`;
  const lists = [6, 29, 89].map((back) => `startTime=${addDays(lastDay, -back)}&endTime=${lastDay}`);
  const stats = [
    `type=day&startTime=${addDays(lastDay, -29)}&endTime=${lastDay}`,
    `type=week&startTime=${addDays(lastDay, -83)}&endTime=${lastDay}`,
    `type=month&startTime=${addDays(lastDay, -89)}&endTime=${lastDay}`,
  ];
  const histories = [29, 89, 365].map((back) => `startTime=${addDays(lastDay, -back)}&endTime=${lastDay}`);
  return new Map<Operation, string[]>([
    ['1 trip list', rows.map((r, i) => `${user(r)}/trips?limit=20&${lists[i % lists.length]}`)],
    ['2 trip detail', rows.map((r) => `${user(r)}/trip/${encodeURIComponent(String(r['trip_id']))}`)],
    ['3 statistics', rows.map((r, i) => `${user(r)}/statistics?${stats[i % stats.length]}`)],
    [
      '4 safety score',
      rows.map(
        (r, i) => `${user(r)}/safety-score?interval=${i % 2 === 0 ? 30 : 90}${i % 4 === 3 ? '&explain=false' : ''}`,
      ),
    ],
    [
      '4h score history',
      rows.map(
        (r, i) =>
          `${user(r)}/safety-score/history?interval=${i % 2 === 0 ? 30 : 90}&${histories[i % histories.length]}`,
      ),
    ],
  ]);
}

/** The operations interleaved, for the run during a publish. */
export function mixedPaths(paths: Map<Operation, string[]>): string[] {
  const lists = OPERATIONS.map((op) => paths.get(op) ?? []);
  const longest = Math.max(...lists.map((l) => l.length));
  const out: string[] = [];
  for (let i = 0; i < longest; i++) for (const list of lists) if (list[i] !== undefined) out.push(list[i] as string);
  return out;
}

/** Operations 1-4 interleaved (list, detail, statistics, score): the api stage's mix without the score history. */
export function readMix(paths: Map<Operation, string[]>): string[] {
  return mixedPaths(new Map([...paths].filter(([op]) => op !== '4h score history')));
}
