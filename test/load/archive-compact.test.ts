import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { runLoad } from '../../src/jobs/load.js';
import { runPurgeJob } from '../../src/jobs/purge.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { runQuarantine } from '../../src/jobs/quarantine.js';
import { appsOf } from '../../src/jobs/data-dir.js';
import { openWarehouse } from '../../src/warehouse/warehouse.js';
import { compactArchive, type CompactOptions } from '../../src/load/archive-compact.js';
import { warehouseRows, workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { uploadFileName } from '../../src/load/uploads.js';
import { runBackup } from '../../src/backup/backup.js';
import { runRestore } from '../../src/backup/restore.js';
import { startJob } from '../helpers/job-process.js';
import { until } from '../helpers/serve-process.js';
import { runWatch } from '../../src/jobs/watch.js';

// A day of small batches in the landing archive merged into gzip files of one member per file:
// fewer files, fewer bytes, the same trips on a re-derive, a purge that takes exactly a driver's
// lines, and a merge killed midway that the next run puts right.
const DRIVERS = [201, 202, 203];
/** A driver of one file only. */
const ALONE = 209;
const FILES = 24;
const day = (d: Date) => d.toISOString().slice(0, 10);

const trip = (appId: string, tripId: string, userId: number, start: Date, seconds = 120) =>
  JSON.stringify(
    tripRecord({ appId, tripId, userId, orgUserId: `org-${userId}`, start: start.toISOString(), seconds }),
  );

/** FILES SDK upload files, each a trip of each driver, loaded one by one: FILES archived files of one day. */
async function dayOfBatches(ws: Workspace, now: Date, seconds = 120): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  mkdirSync(ws.paths.landingDir, { recursive: true });
  for (let f = 0; f < FILES; f++) {
    // SDK upload files (a partner's file stays loose while it is watched for writes, src/load/retake.ts)
    const name = uploadFileName(new Date(now.getTime() - 3_600_000 + f * 1000));
    const lines = DRIVERS.map((u, i) =>
      trip(ws.appId, `t-${f}-${u}`, u, new Date(now.getTime() - 86_400_000 + (f * 3 + i) * 600_000), seconds),
    );
    // the first file holds a line that is not JSON: quarantined, with its file and line; the fourth
    // a trip of a driver of that file alone
    if (f === 3) lines.push(trip(ws.appId, 't-alone', ALONE, new Date(now.getTime() - 3 * 3_600_000), seconds));
    texts[name] = `${lines.join('\n')}\n${f === 0 ? 'not json\n' : ''}`;
    writeFileSync(join(ws.paths.landingDir, name), texts[name] as string);
  }
  const loaded = await runLoad({ dataDir: ws.dir, now, uploadBatchBytes: 0 });
  expect(loaded.totals.tripsLoaded).toBe(FILES * DRIVERS.length + 1);
  return texts;
}

async function compact(ws: Workspace, now: Date, options: CompactOptions) {
  const wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir));
  try {
    return await compactArchive(wh.conn, ws.paths.landingDir, now, options);
  } finally {
    wh.close();
  }
}

const tripsOf = async (ws: Workspace) =>
  warehouseRows(
    ws.paths,
    `select trip_id, user_id, trip_date::varchar as trip_date, status, abnormal_reason, mileage_m, duration_s, max_speed_kmh, count_points, score
     from trips order by trip_id`,
  );

const members = async (ws: Workspace) =>
  warehouseRows(
    ws.paths,
    'select name, merged_name, member_offset::bigint as o, member_length::bigint as l, lines::int as lines from archive_members order by merged_name, member_offset',
  );

const filesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const bytesIn = (dir: string) => filesIn(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

/** Each member's text, read alone by its offset and length, by its original name. */
function memberTexts(dir: string, rows: Record<string, unknown>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rows) {
    const bytes = readFileSync(join(dir, String(r['merged_name'])));
    const o = Number(r['o']);
    out[String(r['name'])] = gunzipSync(bytes.subarray(o, o + Number(r['l']))).toString('utf8');
  }
  return out;
}

describe('the landing archive merged by day', () => {
  let ws: Workspace;
  let texts: Record<string, string>;
  let dir: string;
  const now = new Date('2026-11-21T12:00:00Z');
  let before: Record<string, unknown>[];
  let bytesBefore: number;

  beforeAll(async () => {
    ws = await workspace('UTC');
    texts = await dayOfBatches(ws, now);
    dir = join(ws.paths.landingDir, 'loaded', day(now));
    before = await tripsOf(ws);
    bytesBefore = bytesIn(dir);
  });
  afterAll(() => ws.cleanup());

  it('merges loose files while idle a bounded merge a turn, then the merged files, then load.js the day whole', async () => {
    expect(filesIn(dir)).toEqual(Object.keys(texts).sort());
    // too few loose files: nothing to do
    expect((await compact(ws, now, { minFiles: FILES + 1 })).merges).toBe(0);
    // a turn takes loose files up to its budget (two at least): one merge, the rest for later turns
    const first = await compact(ws, now, { minFiles: 4, budgetBytes: 1 });
    expect(first).toMatchObject({ merges: 1, filesReplaced: 2 });
    for (let turn = 0; turn < 100 && (await compact(ws, now, { minFiles: 4, budgetBytes: 4096 })).merges > 0; turn++);
    const merged = filesIn(dir).filter((f) => f.endsWith('.ndjson.gz'));
    // fewer than minFiles loose files left and fewer than minFiles merged files
    expect(filesIn(dir).filter((f) => f.endsWith('.ndjson')).length).toBeLessThan(4);
    expect(merged.length).toBeLessThan(4);
    expect(merged.length).toBeGreaterThan(0);
    // the load of the next day merges the day whole: one file and its sidecar
    await runLoad({ dataDir: ws.dir, now: new Date(now.getTime() + 86_400_000) });
    expect(filesIn(dir).map((f) => f.replace(/\d+/, 'N'))).toEqual(['archive-N.members.idx', 'archive-N.ndjson.gz']);
    expect(bytesIn(dir)).toBeLessThan(bytesBefore / 4);
    // each member read alone is its file, byte for byte, and the whole file is every file in turn
    const rows = await members(ws);
    expect(rows.length).toBe(FILES);
    expect(memberTexts(dir, rows)).toEqual(texts);
    for (const r of rows) expect(r['lines']).toBe(texts[String(r['name'])]?.split('\n').length - 1);
    const whole = gunzipSync(readFileSync(join(dir, String(rows[0]?.['merged_name'])))).toString('utf8');
    expect(whole).toBe(rows.map((r) => texts[String(r['name'])]).join(''));
    // the purge's index names the merged file for every loaded file
    const indexed = await warehouseRows(ws.paths, 'select distinct archive_name from indexed_files');
    expect(indexed).toEqual([{ archive_name: rows[0]?.['merged_name'] }]);
    // a quarantined line's file is found in the merged file, its line number the file's own
    const list = await runQuarantine(ws.dir, {
      op: 'list',
      date: null,
      reason: null,
      kind: null,
      appId: null,
      limit: 10,
    });
    const bad = list.op === 'list' ? list.items[0] : undefined;
    expect(bad?.lineNo).toBe(DRIVERS.length + 1);
    const shown = await runQuarantine(ws.dir, { op: 'show', id: String(bad?.id) });
    const firstName = Object.keys(texts).sort()[0] as string;
    expect(shown.op === 'show' ? shown.item.nowAt : null).toMatch(
      new RegExp(`/${rows[0]?.['merged_name']} \\(member ${firstName}, bytes \\d+\\+\\d+\\)$`),
    );
  });

  it('re-derives every loaded file from its member: the same trips as before', async () => {
    const result = await runRederive({ dataDir: ws.dir, now: new Date(now.getTime() + 86_400_000) });
    expect(result.totals).toMatchObject({ files: FILES, missing: 0, failed: 0 });
    expect(await tripsOf(ws)).toEqual(before);
    // no scratch copy is left behind
    expect(filesIn(join(ws.paths.landingDir, '.members'))).toEqual([]);
  });

  it('is copied by a backup, and a restore loads it as the files it holds', async () => {
    const to = join(ws.dir, '..', `${ws.dir.split('/').pop()}-backup`);
    const restored = join(ws.dir, '..', `${ws.dir.split('/').pop()}-restored`);
    try {
      await runBackup({ dataDir: ws.dir, to, databaseUrl: null });
      const copied = join(to, 'landing', 'loaded', day(now));
      expect(filesIn(copied)).toEqual(filesIn(dir));
      const result = await runRestore({
        from: to,
        dataDir: restored,
        databaseUrl: null,
        load: async (dataDir, inputs, progress) => (await runLoad({ dataDir, inputs, progress })).totals,
      });
      // every member is a file the warehouse holds already: none derived again, none refused
      expect(result.load).toMatchObject({ files: FILES, filesSkipped: FILES, filesFailed: 0 });
      expect(filesIn(join(restored, 'landing', '.members'))).toEqual([]);
    } finally {
      rmSync(to, { recursive: true, force: true });
      rmSync(restored, { recursive: true, force: true });
    }
  });

  it("takes exactly a driver's lines out of the merged file, line numbers kept, the others readable", async () => {
    const gone = DRIVERS[1] as number;
    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: gone,
      orgUserId: `org-${gone}`,
      requestedAt: '2026-11-22T12:00:00Z',
    });
    const purge = await runPurgeJob({ dataDir: ws.dir, now: new Date(now.getTime() + 2 * 86_400_000) });
    expect(purge.purged.users).toBe(1);
    const rows = await members(ws);
    expect(rows.length).toBe(FILES);
    const blanked = Object.fromEntries(
      Object.entries(texts).map(([name, text]) => [
        name,
        text
          .split('\n')
          .map((line) => (line.includes(`"platformUserId":${gone}`) ? '' : line))
          .join('\n'),
      ]),
    );
    expect(memberTexts(dir, rows)).toEqual(blanked);
    expect(filesIn(dir).filter((f) => f.endsWith('.ndjson.gz')).length).toBe(1);
    // the rewritten members are in the ledger under their new keys: a re-derive still finds them all
    const again = await runRederive({ dataDir: ws.dir, now: new Date(now.getTime() + 2 * 86_400_000) });
    expect(again.totals.failed).toBe(0);
    expect(again.totals.files).toBe(FILES);
    const left = await tripsOf(ws);
    expect(left).toEqual(before.filter((t) => Number(t['user_id']) !== gone));
  });

  it("purges a driver of one member by that member alone: the others' bytes stay where they are", async () => {
    const merged = filesIn(dir).filter((f) => f.endsWith('.ndjson.gz'));
    expect(merged.length).toBe(1);
    const bytesBefore = readFileSync(join(dir, merged[0] as string));
    const rowsBefore = await members(ws);
    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: ALONE,
      orgUserId: `org-${ALONE}`,
      requestedAt: '2026-11-23T12:00:00Z',
    });
    const purge = await runPurgeJob({ dataDir: ws.dir, now: new Date(now.getTime() + 3 * 86_400_000) });
    expect(purge.purged.users).toBe(1);
    // one member read (to look, then to rewrite): a small part of the merged file
    expect(purge.purged.opened.archives.files).toBe(1);
    expect(purge.purged.opened.archives.bytes).toBeLessThan(bytesBefore.length / 4);
    const rows = await members(ws);
    expect(rows.length).toBe(FILES);
    const moved = rows.filter((r) => r['merged_name'] !== merged[0]);
    expect(moved.length).toBe(1);
    // the member's old bytes are zeros now; every other byte of the file is as it was
    const old = rowsBefore.find((r) => r['name'] === moved[0]?.['name']) as Record<string, unknown>;
    const after = readFileSync(join(dir, merged[0] as string));
    const [o, l] = [Number(old['o']), Number(old['l'])];
    expect(after.subarray(o, o + l).every((b) => b === 0)).toBe(true);
    expect(
      Buffer.concat([after.subarray(0, o), after.subarray(o + l)]).equals(
        Buffer.concat([bytesBefore.subarray(0, o), bytesBefore.subarray(o + l)]),
      ),
    ).toBe(true);
    // every member still reads as its file, without the driver's line
    const texts = memberTexts(dir, rows);
    const alone = texts[String(moved[0]?.['name'])] as string;
    expect(alone).not.toContain(`"platformUserId":${ALONE}`);
    // its line numbers are its file's: the driver's line left an empty one
    expect(moved[0]?.['lines']).toBe(old['lines']);
    expect(Object.values(texts).join('')).not.toContain(`"platformUserId":${ALONE}`);
    // a sidecar names no member of the file twice, nor the moved member in the old file
    const sidecar = readFileSync(join(dir, (merged[0] as string).replace('.ndjson.gz', '.members.idx')), 'utf8');
    expect(sidecar).not.toContain(String(moved[0]?.['name']));
  });
});

describe('a merge killed midway', () => {
  let ws: Workspace;
  let texts: Record<string, string>;
  let dir: string;
  // load.js merges the days before the machine's today: the archive day is two days back
  const now = new Date(Date.now() - 2 * 86_400_000);

  beforeAll(async () => {
    ws = await workspace('UTC');
    texts = await dayOfBatches(ws, now, 900);
    dir = join(ws.paths.landingDir, 'loaded', day(now));
  });
  afterAll(() => ws.cleanup());

  it('is put right by the next run: every file once, in a member or as it was, nothing twice', async () => {
    await runKilled(ws, () => filesIn(dir).some((f) => /^\.archive-\d+\.ndjson\.gz\.tmp$/.test(f)));
    await runKilled(ws, () => filesIn(dir).some((f) => /^archive-\d+\.ndjson\.gz$/.test(f)));
    // whatever point the kills met, each archived file is held once: by a member or as itself
    const check = async () => {
      const rows = await members(ws);
      const loose = filesIn(dir).filter((f) => f.endsWith('.ndjson'));
      const held = [...rows.map((r) => String(r['name'])), ...loose].sort();
      expect(held).toEqual(Object.keys(texts).sort());
      const fromMembers = memberTexts(dir, rows);
      for (const name of loose) fromMembers[name] = readFileSync(join(dir, name), 'utf8');
      expect(fromMembers).toEqual(texts);
      // no merged file without rows, no temp file
      const named = new Set(rows.map((r) => String(r['merged_name'])));
      for (const f of filesIn(dir)) {
        expect(f.startsWith('.')).toBe(false);
        if (f.endsWith('.ndjson.gz')) expect(named.has(f), f).toBe(true);
      }
    };
    const wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir));
    try {
      const { recoverDay } = await import('../../src/load/archive-merge.js');
      await recoverDay(wh.conn, dir, day(now), new Date());
    } finally {
      wh.close();
    }
    await check();
    // and a full run merges the day whole
    const done = startJob('load', ['--data-dir', ws.dir]);
    expect((await done.done).code).toBe(0);
    await check();
    expect(filesIn(dir).filter((f) => f.endsWith('.ndjson')).length).toBe(0);
    expect(filesIn(dir).filter((f) => f.endsWith('.ndjson.gz')).length).toBe(1);
  });
});

describe('the continuous load', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await workspace('UTC');
  });
  afterAll(() => ws.cleanup());

  it('merges the day files while idle, between its batches, and goes on loading', async () => {
    const previous = process.env['DRIVING_ARCHIVE_MERGE_FILES'];
    process.env['DRIVING_ARCHIVE_MERGE_FILES'] = '3';
    try {
      const started = Date.now();
      const dir = join(ws.paths.landingDir, 'loaded', day(new Date(started)));
      mkdirSync(ws.paths.landingDir, { recursive: true });
      // an SDK upload a batch: each batch archives a file of its own
      const land = (i: number) => {
        const path = join(ws.paths.landingDir, uploadFileName(new Date(started + i)));
        writeFileSync(`${path}.tmp`, `${trip(ws.appId, `w-${i}`, 301, new Date(started - (6 - i) * 3_600_000))}\n`);
        renameSync(`${path}.tmp`, path);
      };
      const stop = new AbortController();
      let batches = 0;
      land(0);
      const watching = runWatch({
        dataDir: ws.dir,
        pollMs: 50,
        gatherMs: 0,
        maxRestMs: 0,
        quietMs: 0,
        signal: stop.signal,
        onBatch: (batch) => {
          if ((batch.result?.totals.tripsLoaded ?? 0) === 0) return;
          batches++;
          if (batches < 4) land(batches);
        },
      });
      try {
        await until(
          () => batches === 4 && filesIn(dir).some((f) => /^archive-\d+\.ndjson\.gz$/.test(f)),
          'an idle merge',
        );
      } finally {
        stop.abort();
        await watching;
      }
      // every batch file is held once: by a member of a merged file, or as itself
      const rows = await members(ws);
      const loose = filesIn(dir).filter((f) => f.endsWith('.ndjson'));
      expect(rows.length).toBeGreaterThanOrEqual(3);
      expect(rows.length + loose.length).toBe(4);
      const texts = Object.values(memberTexts(dir, rows)).join('');
      expect(texts.split('\n').filter((l) => l !== '').length).toBe(rows.length);
      const loaded = await warehouseRows(ws.paths, "select count(*)::int as n from trips where trip_id like 'w-%'");
      expect(loaded).toEqual([{ n: 4 }]);
    } finally {
      if (previous === undefined) delete process.env['DRIVING_ARCHIVE_MERGE_FILES'];
      else process.env['DRIVING_ARCHIVE_MERGE_FILES'] = previous;
    }
  });
});

/** Runs load.js (which merges the days before today) and kills it with SIGKILL once `when` holds. */
async function runKilled(ws: Workspace, when: () => boolean): Promise<void> {
  const job = startJob('load', ['--data-dir', ws.dir]);
  let finished = false;
  void job.done.then(() => (finished = true));
  while (!finished && !when()) await new Promise((r) => setImmediate(r));
  job.child.kill('SIGKILL');
  await job.done;
}
