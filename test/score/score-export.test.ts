import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { runExport } from '../../src/jobs/export.js';
import { runSqlOnExport } from '../../src/jobs/sql.js';
import { openDatabase } from '../../src/db/open.js';
import { installMacros } from '../../src/db/macros.js';
import { query } from '../../src/db/sql.js';
import { openWarehouse, warehouseVersion } from '../../src/warehouse/warehouse.js';
import { AppStore } from '../../src/apps/store.js';
import { publishedRows, warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;

async function withMemoryDb<T>(
  fn: (c: Awaited<ReturnType<typeof openDatabase>>['connection']) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(':memory:');
  try {
    return await fn(db.connection);
  } finally {
    db.close();
  }
}
const now = new Date('2026-11-21T03:00:00Z');
const SQL = (name: string) => join(import.meta.dirname, '..', '..', 'sql', `${name}.sql`);

beforeAll(async () => {
  ws = await workspace('America/New_York');
  const records = [];
  for (let day = 1; day <= 20; day++) {
    const date = `2026-11-${String(day).padStart(2, '0')}`;
    for (const [user, hour] of [
      [1, '07'],
      [2, '17'],
      [3, '23'],
    ] as const) {
      records.push(
        tripRecord({
          appId: ws.appId,
          tripId: `u${user}-${date}`,
          userId: 500 + user,
          orgUserId: `driver-${user}`,
          start: `${date}T${hour}:30:00-05:00`,
          seconds: 900 + day * 10,
          speed: (i) => (i % 40 < 10 ? 4 : 15 + (i % 7)),
          events:
            day % 3 === 0
              ? [
                  { type: 'phone_usage', from: 60, to: 200 },
                  { type: 'brake', from: 300, to: 302 },
                ]
              : [],
        }),
      );
    }
  }
  // loaded after the last trip ended (2026-11-20 23:30 in New York is 04:30 UTC): a record time more
  // than 10 minutes after the load's clock is out of range
  const loadedAt = new Date('2026-11-21T06:00:00Z');
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'nov.ndjson'), records)], now: loadedAt });
  await runScore({ dataDir: ws.dir, from: '2026-11-19', to: '2026-11-21', now });
});
afterAll(() => {
  ws.cleanup();
  for (const dir of ['export-test', 'not-an-export']) rmSync(`${ws.dir}-${dir}`, { recursive: true, force: true });
});

describe('score job', () => {
  it('scores every user with trips in the window, for both intervals, and publishes every evaluation date', async () => {
    const stored = await warehouseRows(
      ws.paths,
      'select evaluation_date, interval_days, count(*)::int as n from safety_scores group by all order by all',
    );
    expect(stored).toEqual([
      { evaluation_date: '2026-11-19', interval_days: 30, n: 3 },
      { evaluation_date: '2026-11-19', interval_days: 90, n: 3 },
      { evaluation_date: '2026-11-20', interval_days: 30, n: 3 },
      { evaluation_date: '2026-11-20', interval_days: 90, n: 3 },
      { evaluation_date: '2026-11-21', interval_days: 30, n: 3 },
      { evaluation_date: '2026-11-21', interval_days: 90, n: 3 },
    ]);
    // the history route answers any date: the slot keeps them all (the 21st, ahead of New York's today, too)
    const served = await publishedRows(ws.paths, 'safety_scores', 'user_id, interval_days, evaluation_date');
    expect([...new Set(served.map((r) => r['evaluation_date']))].sort()).toEqual([
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
    ]);
  });

  it('gives the same scores when a date is scored again', async () => {
    const cols =
      'user_id, interval_days, evaluation_date, safety_score, count_trips, distracted_driving, low_speed, acclong_abs_1';
    const before = await warehouseRows(ws.paths, `select ${cols} from safety_scores order by all`);
    await runScore({ dataDir: ws.dir, date: '2026-11-20', now });
    expect(await warehouseRows(ws.paths, `select ${cols} from safety_scores order by all`)).toEqual(before);
  });

  it("keeps the model version, the factors, each one's multiplier and contribution, and the percentile with every score", async () => {
    const rows = await warehouseRows(ws.paths, "select * from safety_scores where evaluation_date = '2026-11-21'");
    const inputs = [
      ['distracted_driving', 20],
      ['evening_rush_hour', 1.5],
      ['acclong_abs_1', 4],
      ['weekday_driving', 1.2],
      ['low_speed', 1.5],
      ['events', 1.01],
    ] as const;
    const scoreOf = (v: number[]) =>
      Math.min(100, Math.max(0, 115.38 - 22.3 * 0.682 * inputs.reduce((p, [, b], i) => p * b ** (v[i] as number), 1)));
    for (const row of rows) {
      expect(row['model_version']).toBe('safety-score/1');
      const values = inputs.map(([c]) => Number(row[c === 'events' ? 'events_per_100km' : c]));
      const score = scoreOf(values);
      inputs.forEach(([c, b], i) => {
        expect(Number(row[`multiplier_${c}`]), c).toBeCloseTo(b ** (values[i] as number), 12);
        expect(Number(row[`contribution_${c}`]), c).toBeCloseTo(
          Math.round((scoreOf(values.map((v, j) => (j === i ? 0 : v))) - score) * 100) / 100,
          9,
        );
      });
    }
    // driver-2 drives 17:30-17:45 New York time every day: all of it is evening rush hour
    const rush = rows.find((r) => r['org_user_id'] === 'driver-2' && r['interval_days'] === 30)!;
    expect(Number(rush['evening_rush_hour'])).toBe(1);
    // three drivers per interval; 1 and 3 drive alike (outside rush hour), so they tie: rank 1 + how many score lower
    for (const interval of [30, 90]) {
      const group = rows.filter((r) => r['interval_days'] === interval);
      const scores = group.map((r) => Number(r['safety_score']));
      expect(group.map((r) => Number(r['percentile']))).toEqual(
        scores.map((x) => Math.round(((100 * scores.filter((y) => y < x).length) / 2) * 100) / 100),
      );
      expect(new Set(scores).size).toBe(2);
    }
  });

  it('fills the explanation and percentile of scores stored before they were kept, and publishes them', async () => {
    const cols = `user_id, interval_days, evaluation_date, percentile, ${[
      'distracted_driving',
      'evening_rush_hour',
      'acclong_abs_1',
      'weekday_driving',
      'low_speed',
      'events',
    ]
      .flatMap((c) => [`multiplier_${c}`, `contribution_${c}`])
      .join(', ')}`;
    const before = await warehouseRows(ws.paths, `select ${cols} from safety_scores order by all`);
    // the warehouse as an earlier version left it: none of these columns, the proportional lost_* instead
    const db = await openDatabase(ws.paths.warehouseFile);
    for (const c of cols.split(', ').slice(3)) await query(db.connection, `alter table safety_scores drop column ${c}`);
    for (const c of ['distracted_driving', 'events'])
      await query(db.connection, `alter table safety_scores add column lost_${c} double default 0`);
    // …and no digest of the schema it ran (an earlier version wrote none), so the open migrates
    await query(db.connection, "delete from meta where key = 'schema_digest'");
    db.close();
    const wh = await openWarehouse(ws.paths.warehouseFile, await new AppStore(ws.paths.appsFile).list());
    const version = await warehouseVersion(wh.conn);
    wh.close();
    expect(await warehouseRows(ws.paths, `select ${cols} from safety_scores order by all`)).toEqual(before);
    expect(
      await warehouseRows(
        ws.paths,
        "select count(*)::int as n from information_schema.columns where table_name = 'safety_scores' and column_name like 'lost_%'",
      ),
    ).toEqual([{ n: 0 }]);
    expect(await warehouseRows(ws.paths, 'select distinct version::int as v from safety_scores')).toEqual([
      { v: version },
    ]);
    // the next job's publish carries them to the slot
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
    const served = await publishedRows(ws.paths, 'safety_scores', 'user_id, interval_days, evaluation_date');
    expect(served.filter((r) => r['evaluation_date'] === '2026-11-19')).toHaveLength(6);
    expect(served.every((r) => r['multiplier_distracted_driving'] !== null && r['percentile'] !== null)).toBe(true);
  });

  it('keeps every evaluation date in both slots as newer ones are published, and a date scored again once', async () => {
    const later = new Date('2026-11-23T03:00:00Z');
    for (const date of ['2026-11-22', '2026-11-22']) {
      await runScore({ dataDir: ws.dir, date, now: later });
      const served = await publishedRows(ws.paths, 'safety_scores', 'user_id, interval_days, evaluation_date');
      expect([...new Set(served.map((r) => r['evaluation_date']))]).toEqual([
        '2026-11-19',
        '2026-11-20',
        '2026-11-21',
        '2026-11-22',
      ]);
      expect(served).toHaveLength(24);
    }
  });
});

describe('safety-score model', () => {
  it('falls when any one risk factor rises, all else equal', async () => {
    const db = await openDatabase(':memory:');
    await installMacros(db.connection);
    const base = { d: 0.02, r: 0.2, a: 0.1, w: 0.7, l: 0.3, e: 3 };
    const score = async (f: typeof base) =>
      Number((await query(db.connection, 'select ss_score(ss_pcf($d, $r, $a, $w, $l, $e)) as s', f))[0]?.['s']);
    const reference = await score(base);
    for (const key of Object.keys(base) as (keyof typeof base)[]) {
      expect(await score({ ...base, [key]: base[key] + 0.05 }), key).toBeLessThan(reference);
    }
    expect(await score({ d: 0, r: 0, a: 0, w: 0, l: 0, e: 0 })).toBe(100);
    db.close();
  });
});

describe('Parquet export', () => {
  it('gives analysts the same numbers as the warehouse when sql/ runs on it', async () => {
    // outside the data folder: inside it an export goes to exports/ only
    const out = `${ws.dir}-export-test`;
    const exported = await runExport({ dataDir: ws.dir, out });
    expect(exported.tables['trips']).toBe(60);

    const { rows: scores, notes } = await runSqlOnExport({
      parquet: out,
      file: SQL('models/marts/safety_scores'),
      params: ['as_of=2026-11-21', 'evaluated_at=2026-11-21T03:00:00Z'],
    });
    expect(notes).toEqual([]);
    const fromWarehouse = await warehouseRows(
      ws.paths,
      "select * exclude (version, evaluated_at) from safety_scores where evaluation_date = '2026-11-21' order by user_id, interval_days",
    );
    const sorted = scores
      .map(({ evaluated_at: _, ...rest }) => rest)
      .sort(
        (a, b) =>
          Number(a['user_id']) - Number(b['user_id']) || Number(a['interval_days']) - Number(b['interval_days']),
      );
    expect(sorted).toEqual(fromWarehouse);

    // the score history with its explanation and percentiles, as a table: every stored score
    const history = await withMemoryDb((c) =>
      query(
        c,
        'select evaluation_date, user_id, interval_days, percentile, contribution_distracted_driving, multiplier_events, model_version from read_parquet($g, hive_partitioning = true) order by all',
        { g: join(out, 'safety_scores', '**', '*.parquet') },
      ),
    );
    expect(history).toEqual(
      await warehouseRows(
        ws.paths,
        'select evaluation_date, user_id, interval_days, percentile, contribution_distracted_driving, multiplier_events, model_version from safety_scores order by all',
      ),
    );
    expect(new Set(history.map((r) => r['evaluation_date'])).size).toBeGreaterThanOrEqual(4);
    expect(history.every((r) => r['percentile'] !== null)).toBe(true);

    const { mkdirSync, writeFileSync, readFileSync } = await import('node:fs');
    const foreign = `${ws.dir}-not-an-export`;
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'precious.txt'), 'keep');
    await expect(runExport({ dataDir: ws.dir, out: foreign })).rejects.toThrow(/not an earlier export/);
    expect(readFileSync(join(foreign, 'precious.txt'), 'utf8')).toBe('keep');
    await runExport({ dataDir: ws.dir, out }); // an earlier export is replaced

    const { rows: stats } = await runSqlOnExport({
      parquet: out,
      file: SQL('models/marts/stats_daily'),
      params: ['version=0'],
    });
    const statsWarehouse = await warehouseRows(
      ws.paths,
      'select * exclude (version) from stats_daily order by user_id, stat_date',
    );
    expect(
      stats
        .map(({ version: _, ...rest }) => rest)
        .sort(
          (a, b) =>
            Number(a['user_id']) - Number(b['user_id']) || String(a['stat_date']).localeCompare(String(b['stat_date'])),
        ),
    ).toEqual(statsWarehouse);
  });
});
