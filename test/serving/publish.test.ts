import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { openDatabase } from '../../src/db/open.js';
import { run, sqlText } from '../../src/db/sql.js';
import { checkedTables, checkNames } from '../../src/warehouse/checks.js';
import { manifestOf, publishedRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';
import { slotFile } from '../../src/publish/manifest.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('UTC');
});
afterEach(() => ws.cleanup());
afterAll(removeBuiltFolders);
const now = new Date('2026-11-21T08:00:00Z');

const trip = (id: string, day: string) =>
  tripRecord({ appId: ws.appId, tripId: id, start: `${day}T08:00:00Z`, seconds: 600 });

/**
 * Makes this test's folder a copy of one where each trip (id, day) was loaded by a load of its own,
 * from in/1.ndjson on: built once for the same trips, as several tests start from the same loads.
 */
async function loaded(...trips: [string, string][]): Promise<void> {
  ws.cleanup();
  ({ ws } = await builtFolder(`publish/${trips.map((t) => t.join('@')).join('+')}`, 'UTC', async (w) => {
    ws = w;
    for (const [i, [id, day]] of trips.entries())
      await runLoad({
        dataDir: w.dir,
        inputs: [writeNdjson(join(w.dir, 'in', `${i + 1}.ndjson`), [trip(id, day)])],
        now,
      });
  }));
}

describe('publish', () => {
  it('alternates slots, copies only what changed since the standby slot was last written, and leaves the other slot caught up', async () => {
    const first = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '1.ndjson'), [trip('a', '2026-11-18'), trip('b', '2026-11-18')])],
      now,
    });
    expect(manifestOf(ws.paths)?.slot).toBe('a');
    // no slot b yet: nothing to catch up
    expect(first.publish.settled).toBeUndefined();
    const second = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('c', '2026-11-19')])],
      now,
    });
    // slot b is new: it is built from zero once; then slot a, retired, gets version 2 (trip c and its day)
    expect(second.publish).toMatchObject({ slot: 'b', fromVersion: 0, version: 2 });
    expect(second.publish.settled).toMatchObject({ slot: 'a', fromVersion: 1, version: 2, rowsApplied: 2 });
    const third = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('d', '2026-11-20')])],
      now,
    });
    // slot a was caught up to version 2: it receives version 3 only (trip d and its day), and so does slot b after
    expect(third.publish).toMatchObject({ slot: 'a', fromVersion: 2, version: 3, rowsApplied: 2 });
    expect(third.publish.settled).toMatchObject({ slot: 'b', fromVersion: 2, version: 3, rowsApplied: 2 });
    const trips = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(trips.map((t) => t['trip_id'])).toEqual(['a', 'b', 'c', 'd']);
    const other = await openDatabase(slotFile(ws.paths.publishedDir, 'b'), { readOnly: true });
    try {
      const rows = (await other.connection.runAndReadAll('select trip_id from trips order by 1'))
        .getRows()
        .map((r) => r[0]);
      expect(rows).toEqual(['a', 'b', 'c', 'd']);
      expect((await other.connection.runAndReadAll("select value from meta where key = 'version'")).getRows()).toEqual([
        ['3'],
      ]);
    } finally {
      other.close();
    }
  });

  it('leaves slots without indexes, and drops the ones an earlier version built at the next publish', async () => {
    await loaded(['a', '2026-11-18'], ['b', '2026-11-19']);
    const indexes = async (slot: 'a' | 'b') => {
      const db = await openDatabase(slotFile(ws.paths.publishedDir, slot));
      try {
        return (await db.connection.runAndReadAll('select index_name from duckdb_indexes() order by 1'))
          .getRows()
          .map((r) => r[0]);
      } finally {
        db.close();
      }
    };
    expect(await indexes('a')).toEqual([]);
    // slot a as an earlier version left it: with indexes, and the digest of another slot schema
    // (a publish that finds its own skips sql/ops/publish/slot_schema.sql)
    const old = await openDatabase(slotFile(ws.paths.publishedDir, 'a'));
    expect(
      (await old.connection.runAndReadAll("select count(*) from meta where key = 'schema_digest'")).getRows()[0]?.[0],
    ).toBe(1n);
    await run(old.connection, "update meta set value = 'an earlier schema' where key = 'schema_digest'");
    await run(old.connection, 'create index trips_user_id on trips (user_id)');
    await run(old.connection, 'create index stats_daily_user_id on stats_daily (user_id)');
    old.close();
    expect(await indexes('a')).toEqual(['stats_daily_user_id', 'trips_user_id']);
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('c', '2026-11-20')])],
      now,
    });
    expect(manifestOf(ws.paths)?.slot).toBe('a');
    expect(await indexes('a')).toEqual([]);
  });

  it('refuses to publish when a check fails and keeps serving the last good slot', async () => {
    await loaded(['a', '2026-11-18']);
    const good = manifestOf(ws.paths);
    // corrupt the warehouse: a statistics row that disagrees with its trips, at a new version
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(db.connection, 'update stats_daily set mileage_m = mileage_m + 1, version = 2');
    await run(db.connection, "update meta set value = '2' where key = 'version'");
    db.close();
    await expect(runLoad({ dataDir: ws.dir, inputs: [], now })).rejects.toThrow(/checks\/stats_match_trips/);
    expect(manifestOf(ws.paths)).toEqual(good);
  });

  it('runs the checks of what changed: a score-only change is checked by the checks that read scores', async () => {
    await loaded(['a', '2026-11-18']);
    await runScore({ dataDir: ws.dir, date: '2026-11-19', now });
    const good = manifestOf(ws.paths);
    // a score out of range at a new version, and nothing else changed: the trip and statistics
    // checks are skipped (they have no changed row to look at), values_in_range is not
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(db.connection, 'update safety_scores set safety_score = 150, version = 3');
    await run(db.connection, "update meta set value = '3' where key = 'version'");
    db.close();
    await expect(runLoad({ dataDir: ws.dir, inputs: [], now })).rejects.toThrow(/checks\/values_in_range/);
    expect(manifestOf(ws.paths)).toEqual(good);
  });

  it('names in every check the tables whose changed rows it reads', () => {
    for (const name of checkNames()) {
      const sql = sqlText(name);
      const read = ['trips', 'trip_events', 'stats_daily', 'safety_scores'].filter((t) =>
        new RegExp(`\\bfrom ${t}\\b`).test(sql),
      );
      expect(read.length, name).toBeGreaterThan(0);
      expect(checkedTables(name).sort(), name).toEqual(expect.arrayContaining(read.sort()));
    }
  });

  it('waits for a reader to let go of the standby slot, saying whom it waits for', async () => {
    await loaded(['a', '2026-11-18']);
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('b', '2026-11-18')])],
      now,
    });
    expect(manifestOf(ws.paths)?.slot).toBe('b');
    // an API that has not yet closed slot a (the standby now) holds a read lock on it until told
    const { spawn } = await import('node:child_process');
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const i = await DuckDBInstance.create(${JSON.stringify(slotFile(ws.paths.publishedDir, 'a'))}, { access_mode: 'READ_ONLY' });
      await i.connect(); console.log('holding'); process.stdin.on('data', () => process.exit(0));`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout.on('data', () => resolve()));
    const exited = new Promise<void>((resolve) => holder.on('exit', () => resolve()));
    // the reader lets go when the publish says it waits for it: an event, not a delay
    const waits: string[] = [];
    const progress = (m: string) => {
      if (!m.includes('waiting for')) return;
      waits.push(m);
      holder.stdin?.write('go\n');
    };
    process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'] = '120000';
    try {
      const result = await runLoad({
        dataDir: ws.dir,
        inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('c', '2026-11-18')])],
        now,
        progress,
      });
      expect(result.publish).toMatchObject({ published: true, slot: 'a' });
    } finally {
      delete process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'];
      holder.stdin?.end();
      await exited;
    }
    expect(waits[0]).toMatch(
      new RegExp(`publish: waiting for PID ${holder.pid} \\(.*\\) holding the standby slot slot-a.duckdb`),
    );
  });

  it('writes the serving pack sections that changed as delta layers, merges layers, reuses the rest, and removes files no manifest names', async () => {
    const first = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '1.ndjson'), [trip('a', '2026-11-18')])],
      now,
    });
    expect(first.publish.pack?.map((p) => [p.section, p.rows, p.copied])).toEqual([
      ['trips', 1, 0],
      ['stats', 1, 0],
      ['scores', 0, 0],
    ]);
    writeFileSync(join(ws.paths.publishedDir, 'serving-v9-trips.pack.tmp'), 'left by a killed build');
    // a delta of one row on a base of one: merged at once into a new base (src/serving/layers.ts)
    const second = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('b', '2026-11-19')])],
      now,
    });
    expect(second.publish.pack?.map((p) => [p.section, p.rows, p.copied])).toEqual([
      ['trips', 1, 0],
      ['trips', 2, 2],
      ['stats', 1, 0],
      ['stats', 2, 2],
    ]);
    // a delta of one row on a base of two stays a layer of its own
    const third = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('c', '2026-11-20')])],
      now,
    });
    expect(third.publish.pack?.map((p) => [p.section, p.rows, p.copied])).toEqual([
      ['trips', 1, 0],
      ['stats', 1, 0],
    ]);
    // no score has changed since version 1: the scores file of version 1 is reused
    expect(manifestOf(ws.paths)?.pack?.files).toEqual({
      trips: ['serving-v2-trips-merged.pack', 'serving-v3-trips.pack'],
      stats: ['serving-v2-stats-merged.pack', 'serving-v3-stats.pack'],
      scores: ['serving-v1-scores.pack'],
    });
    // each section file has its extras beside it (src/serving/format.ts); the previous manifest's files stay for an API still reading them
    const served = () =>
      readdirSync(ws.paths.publishedDir)
        .filter((f) => f.startsWith('serving-'))
        .sort();
    const withExtras = (files: string[]) => files.flatMap((f) => [f, `${f}.extras`]);
    expect(served()).toEqual(
      withExtras([
        'serving-v1-scores.pack',
        'serving-v2-stats-merged.pack',
        'serving-v2-trips-merged.pack',
        'serving-v3-stats.pack',
        'serving-v3-trips.pack',
      ]),
    );
    // the score job changes scores only: only they are written again, a delta (that night's scores)
    // merged at once with the empty base below it
    const scored = await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
    const scores = (await publishedRows(ws.paths, 'safety_scores', 'user_id')).length;
    expect(scores).toBeGreaterThan(0);
    expect(scored.publish.pack?.map((p) => [p.section, p.rows, p.copied])).toEqual([
      ['scores', scores, 0],
      ['scores', scores, scores],
    ]);
    expect(manifestOf(ws.paths)?.pack?.files.scores).toEqual(['serving-v4-scores-merged.pack']);
    // a fourth delta: 2 >= 2 x 1 holds below it, 2 < 2 x (1 + 1) does not: all three merge into a base of four rows
    const fourth = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '4.ndjson'), [trip('d', '2026-11-21')])],
      now,
    });
    expect(fourth.publish.pack?.filter((p) => p.section === 'trips').map((p) => [p.rows, p.copied])).toEqual([
      [1, 0],
      [4, 4],
    ]);
    expect(manifestOf(ws.paths)?.pack?.files.trips).toEqual(['serving-v5-trips-merged.pack']);
    expect(served()).toEqual(
      withExtras(['serving-v4-scores-merged.pack', 'serving-v5-stats-merged.pack', 'serving-v5-trips-merged.pack'])
        .concat(
          withExtras([
            'serving-v2-stats-merged.pack',
            'serving-v2-trips-merged.pack',
            'serving-v3-stats.pack',
            'serving-v3-trips.pack',
          ]),
        )
        .sort(),
    );
  });

  it('writes anew, instead of copying or reusing, pack files of another format (an older version of the service)', async () => {
    await loaded(['a', '2026-11-18'], ['b', '2026-11-19']);
    const before = manifestOf(ws.paths)?.pack?.files;
    expect(before).toEqual({
      trips: ['serving-v2-trips-merged.pack'],
      stats: ['serving-v2-stats-merged.pack'],
      scores: ['serving-v1-scores.pack'],
    });
    // the served trips and scores files now end in the previous format's mark
    for (const file of [before!.trips[0] as string, before!.scores[0] as string]) {
      const path = join(ws.paths.publishedDir, file);
      const bytes = readFileSync(path);
      bytes.write('DDSPACK3', bytes.length - 8, 'latin1');
      writeFileSync(path, bytes);
    }
    const third = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('c', '2026-11-20')])],
      now,
    });
    expect(third.publish.pack?.map((p) => [p.section, p.rows, p.copied])).toEqual([
      ['trips', 3, 0],
      ['stats', 1, 0],
      ['scores', 0, 0],
    ]);
    // statistics are read as they are: a delta on them
    expect(manifestOf(ws.paths)?.pack?.files).toEqual({
      trips: ['serving-v3-trips.pack'],
      stats: ['serving-v2-stats-merged.pack', 'serving-v3-stats.pack'],
      scores: ['serving-v3-scores.pack'],
    });
  });

  it('does not switch when the serving pack cannot be written, and finishes the publish on the next run', async () => {
    await loaded(['a', '2026-11-18']);
    const good = manifestOf(ws.paths);
    // the pack's final name is taken by a folder: the rename fails after the slot was written
    mkdirSync(join(ws.paths.publishedDir, 'serving-v2-trips.pack'));
    await expect(
      runLoad({
        dataDir: ws.dir,
        inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('b', '2026-11-19')])],
        now,
      }),
    ).rejects.toThrow();
    expect(manifestOf(ws.paths)).toEqual(good);
    expect(readdirSync(ws.paths.publishedDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    rmSync(join(ws.paths.publishedDir, 'serving-v2-trips.pack'), { recursive: true });
    const retried = await runLoad({ dataDir: ws.dir, inputs: [], now });
    expect(retried.publish).toMatchObject({ published: true, slot: 'b', version: 2 });
    expect(manifestOf(ws.paths)?.pack?.files.trips).toEqual(['serving-v2-trips-merged.pack']);
    expect((await publishedRows(ws.paths, 'trips', 'trip_id')).map((t) => t['trip_id'])).toEqual(['a', 'b']);
  });
});
