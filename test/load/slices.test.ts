// A large partner file loaded a slice at a time (src/load/slices.ts) ends as a load of the whole
// file: the same trips, statistics and quarantine (the partner's file name and line numbers); a
// load killed with SIGKILL between slices resumes and merges each slice once; through the real
// continuous load, an SDK upload that arrives meanwhile is served before the file's last slice, and
// score.js started beside it waits for the batch in hand rather than its own short limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { gzipSync } from 'node:zlib';
import { basename, join } from 'node:path';
import {
  manifestOf,
  publishedRows,
  sameApps,
  warehouseRows,
  workspace,
  writeNdjson,
  type Workspace,
} from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { runJobKilledOn, runJobProcess, startJob } from '../helpers/job-process.js';
import { until } from '../helpers/serve-process.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { uploadFileName } from '../../src/load/uploads.js';
import { runLoad } from '../../src/jobs/load.js';
import { runRederive } from '../../src/jobs/rederive.js';
import { landingStatus } from '../../src/landing-status.js';

/** Small enough that the test file (about 1.4 MB) is cut into several slices. */
const SLICE_BYTES = 256 * 1024;

let reference: Workspace;
let partnerFile: string;

/** A partner's day file: 40 trips of 20 drivers, with bad lines (and blank ones) spread through it. */
function partnerRecords(appId: string): unknown[] {
  const records: unknown[] = [];
  for (let i = 0; i < 40; i++) {
    records.push(
      tripRecord({
        appId,
        tripId: `p-${i}`,
        userId: 500 + (i % 20),
        orgUserId: `d-${i % 20}`,
        start: `2026-11-20T${String(5 + (i % 14)).padStart(2, '0')}:${String(i % 2 === 0 ? 0 : 30).padStart(2, '0')}:00Z`,
        seconds: 600,
        speed: (s) => 8 + (s % 7),
        events: i % 3 === 0 ? [{ type: 'brake', from: 30, to: 33 }] : [],
      }),
    );
    // a line the quarantine keeps, by the line number it has in this file
    if (i % 9 === 4) records.push('{"broken": ');
    if (i % 11 === 6) records.push('');
    // a record rejected by a rule (an unknown app)
    if (i % 13 === 7)
      records.push({ ...(records[records.length - 1] as object), appId: 'no-such-app', tripId: `x-${i}` });
  }
  return records;
}

/** What a load leaves, with the partner's file named by its name (the data folders differ); without the SDK driver's rows. */
async function outcome(ws: Workspace) {
  // what names the load's run (its version, batch, file key, the file's folder) differs by design
  const runless = (rows: Record<string, unknown>[]) =>
    rows.map((t) => Object.fromEntries(Object.entries(t).filter(([k]) => !/version|batch|file|loaded_at/.test(k))));
  return {
    trips: runless(await publishedRows(ws.paths, 'trips', 'app_id, trip_id')).filter((t) => t['user_id'] !== SDK_USER),
    stats: runless(await publishedRows(ws.paths, 'stats_daily', 'app_id, user_id, stat_date')).filter(
      (t) => t['user_id'] !== SDK_USER,
    ),
    warehouseTrips: (
      await warehouseRows(
        ws.paths,
        'select app_id, trip_id, user_id, status, abnormal_reason, mileage_m, score, source_line, ' +
          "regexp_extract(source_file, '[^/]+$') as file from trips order by all",
      )
    ).filter((t) => t['user_id'] !== SDK_USER),
    quarantine: await warehouseRows(
      ws.paths,
      "select regexp_extract(source_file, '[^/]+$') as file, line_no, kind, reason from quarantine order by all",
    ),
  };
}

const archived = (ws: Workspace): string[] =>
  existsSync(join(ws.paths.landingDir, 'loaded'))
    ? readdirSync(join(ws.paths.landingDir, 'loaded'), { recursive: true })
        .map(String)
        .filter((n) => n.endsWith('.ndjson'))
    : [];

/** The partner's file put into the landing area. */
function drop(ws: Workspace): void {
  mkdirSync(ws.paths.landingDir, { recursive: true });
  copyFileSync(partnerFile, join(ws.paths.landingDir, 'partner-day.ndjson'));
}

/** The driver whose SDK upload arrives while the partner's file loads. */
const SDK_USER = '900';

const NOW = new Date('2026-11-21T12:00:00Z');

beforeAll(async () => {
  reference = await workspace('UTC');
  partnerFile = writeNdjson(join(reference.dir, 'in', 'partner-day.ndjson'), partnerRecords(reference.appId));
  drop(reference);
  // the whole file at once: under the default slice size
  const whole = await runLoad({ dataDir: reference.dir, now: NOW });
  expect(whole.files).toHaveLength(1);
}, 300_000);
afterAll(() => reference.cleanup());

describe('a partner file loaded in slices', () => {
  it('one slice a run ends as the whole file loaded at once, and archives the file whole after its last slice', async () => {
    const ws = sameApps(reference);
    try {
      drop(ws);
      const landed = join(ws.paths.landingDir, 'partner-day.ndjson');
      const hourAgo = new Date(Date.now() - 3600_000);
      utimesSync(landed, hourAgo, hourAgo);
      const runs: number[] = [];
      const waitedWhileSliced: number[] = [];
      for (let run = 0; run < 20 && existsSync(landed); run++) {
        const result = await runLoad({ dataDir: ws.dir, now: NOW, sliceBytes: SLICE_BYTES, maxSlices: 1 });
        runs.push(result.totals.tripsLoaded);
        const status = landingStatus(ws.paths.landingDir);
        if (status.oldestWaitingSeconds !== null) waitedWhileSliced.push(status.oldestWaitingSeconds);
        // each run takes one slice: the file's name in its reports, and its trips a part of the file's
        expect(result.files.map((f) => basename(f.file))).toEqual(['partner-day.ndjson']);
      }
      expect(runs.length).toBeGreaterThanOrEqual(3);
      expect(waitedWhileSliced.length).toBeGreaterThanOrEqual(2);
      // a file loading a slice a run waits since its last slice, not since it arrived an hour ago
      expect(Math.max(...waitedWhileSliced)).toBeLessThan(600);
      expect(runs.every((n) => n > 0 && n < 40)).toBe(true);
      expect(runs.reduce((a, b) => a + b, 0)).toBe(40);
      expect(archived(ws)).toEqual([join(NOW.toISOString().slice(0, 10), 'partner-day.ndjson')]);
      expect(readdirSync(join(ws.paths.landingDir, '.slices'))).toEqual([]);
      const expected = await outcome(reference);
      // bad lines all through the file, named by their line in it
      expect(expected.quarantine.length).toBeGreaterThanOrEqual(6);
      expect(Math.max(...expected.quarantine.map((q) => Number(q['line_no'])))).toBeGreaterThan(40);
      expect(await outcome(ws)).toEqual(expected);
      // no record loaded twice: one batch a slice, none replaced
      const batches = await warehouseRows(ws.paths, "select count(*)::int as n from batches where kind = 'load'");
      expect(batches[0]?.['n']).toBe(runs.length);
      // a re-derivation cuts each slice again from the archived file: nothing missing, nothing changed
      const rederived = await runRederive({ dataDir: ws.dir, now: NOW });
      expect(rederived.totals).toMatchObject({ files: runs.length, missing: 0, failed: 0, changed: 0, rederived: 40 });
      expect(await outcome(ws)).toEqual(expected);
      // the same file sent again is known
      drop(ws);
      const again = await runLoad({ dataDir: ws.dir, now: NOW, sliceBytes: SLICE_BYTES });
      expect(again.totals.tripsLoaded).toBe(0);
      expect(again.files.every((f) => f.skipped)).toBe(true);
    } finally {
      ws.cleanup();
    }
  });

  it('a gzip file is sliced from its text, written out once, and ends as the plain file loaded whole', async () => {
    const ws = sameApps(reference);
    try {
      mkdirSync(ws.paths.landingDir, { recursive: true });
      const landed = join(ws.paths.landingDir, 'partner-day.ndjson.gz');
      writeFileSync(landed, gzipSync(readFileSync(partnerFile)));
      let runs = 0;
      for (; runs < 20 && existsSync(landed); runs++) {
        await runLoad({ dataDir: ws.dir, now: NOW, sliceBytes: SLICE_BYTES, maxSlices: 1 });
        // the text is kept beside the plan while slices remain
        if (existsSync(landed))
          expect(readdirSync(join(ws.paths.landingDir, '.slices'), { recursive: true }).map(String)).toContain(
            join(readdirSync(join(ws.paths.landingDir, '.slices'))[0] as string, 'text.ndjson'),
          );
      }
      expect(runs).toBeGreaterThanOrEqual(3);
      // archived whole, as it came
      expect(
        readdirSync(join(ws.paths.landingDir, 'loaded'), { recursive: true })
          .map(String)
          .filter((n) => n.endsWith('.gz')),
      ).toEqual([join(NOW.toISOString().slice(0, 10), 'partner-day.ndjson.gz')]);
      expect(readdirSync(join(ws.paths.landingDir, '.slices'))).toEqual([]);
      const plain = (rows: Record<string, unknown>[]) =>
        rows.map((r) => ('file' in r ? { ...r, file: String(r['file']).replace(/\.gz$/, '') } : r));
      const want = await outcome(reference);
      const got = async () => {
        const o = await outcome(ws);
        return { ...o, warehouseTrips: plain(o.warehouseTrips), quarantine: plain(o.quarantine) };
      };
      expect(await got()).toEqual(want);
      // a re-derivation cuts each slice again from the gzip file's text, written out once
      const rederived = await runRederive({ dataDir: ws.dir, now: NOW });
      expect(rederived.totals).toMatchObject({ files: runs, missing: 0, failed: 0, changed: 0, rederived: 40 });
      expect(await got()).toEqual(want);
      expect(readdirSync(join(ws.paths.landingDir, '.slices'))).toEqual([]);
    } finally {
      ws.cleanup();
    }
  });

  it('a file that changes between slices is planned anew and taken again whole', async () => {
    const ws = sameApps(reference);
    try {
      drop(ws);
      const first = await runLoad({ dataDir: ws.dir, now: NOW, sliceBytes: SLICE_BYTES, maxSlices: 1 });
      expect(first.totals.tripsLoaded).toBeGreaterThan(0);
      // the partner appends to the file in place after its first slice was taken
      const landed = join(ws.paths.landingDir, 'partner-day.ndjson');
      const more = [0, 1, 2].map((i) =>
        tripRecord({
          appId: ws.appId,
          tripId: `late-${i}`,
          userId: 700 + i,
          orgUserId: `late-${i}`,
          start: '2026-11-20T21:00:00Z',
          seconds: 300,
        }),
      );
      appendFileSync(landed, `${more.map((r) => JSON.stringify(r)).join('\n')}\n`);
      const notes: string[] = [];
      for (let run = 0; run < 20 && existsSync(landed); run++)
        await runLoad({
          dataDir: ws.dir,
          now: NOW,
          sliceBytes: SLICE_BYTES,
          maxSlices: 1,
          progress: (line) => notes.push(line),
        });
      expect(notes.some((n) => n.includes('changed since its slices were planned'))).toBe(true);
      const trips = await warehouseRows(ws.paths, 'select trip_id from trips order by all');
      // every record of the file as it ends, the appended ones too, once each
      expect(trips.map((t) => String(t['trip_id']))).toEqual(
        [...Array.from({ length: 40 }, (_, i) => `p-${i}`), 'late-0', 'late-1', 'late-2'].sort(),
      );
      expect(archived(ws)).toEqual([join(NOW.toISOString().slice(0, 10), 'partner-day.ndjson')]);
    } finally {
      ws.cleanup();
    }
  });

  it('a load killed with SIGKILL between slices resumes where it stopped and merges each slice once', async () => {
    const ws = sameApps(reference);
    const env = { DRIVING_LOAD_SLICE_BYTES: String(SLICE_BYTES) };
    try {
      drop(ws);
      const killed = await runJobKilledOn('load', ['--data-dir', ws.dir], '[2/', env);
      expect(killed.signal).toBe('SIGKILL');
      const before = await warehouseRows(ws.paths, 'select count(*)::int as n from trips');
      expect(Number(before[0]?.['n'])).toBeGreaterThan(0);
      expect(Number(before[0]?.['n'])).toBeLessThan(40);
      const again = await runJobProcess('load', ['--data-dir', ws.dir], env);
      expect(again.code, again.stderr).toBe(0);
      expect(existsSync(join(ws.paths.landingDir, 'partner-day.ndjson'))).toBe(false);
      const batches = await warehouseRows(
        ws.paths,
        "select count(*)::int as n, count(distinct report->>'file')::int as files from batches where kind = 'load'",
      );
      const slices = await warehouseRows(ws.paths, 'select count(*)::int as n from loaded_files');
      // every slice merged once: as many batches as ledger rows, and the whole file's outcome
      expect(batches[0]?.['n']).toBe(slices[0]?.['n']);
      expect(Number(slices[0]?.['n'])).toBeGreaterThanOrEqual(3);
      expect(await outcome(ws)).toEqual(await outcome(reference));
    } finally {
      ws.cleanup();
    }
  });

  it('through the continuous load: an upload that arrives meanwhile is served before the last slice, and score.js waits its turn', async () => {
    const ws = sameApps(reference);
    // a limit shorter than any batch: score.js gets the warehouse only by waiting for the batch in hand
    const env = { DRIVING_LOAD_SLICE_BYTES: String(SLICE_BYTES / 2), DRIVING_WAREHOUSE_LOCK_WAIT_MS: '100' };
    const watch = startJob('load', ['--data-dir', ws.dir, '--watch', '--poll-ms', '200'], env);
    try {
      const served = async (): Promise<string[]> => {
        const manifest = manifestOf(ws.paths);
        if (!manifest) return [];
        const db = await openDatabase(join(ws.paths.publishedDir, manifest.file), {
          readOnly: true,
          lockWaitMs: 5_000,
        });
        try {
          return (await query(db.connection, 'select trip_id from trips')).map((r) => String(r['trip_id']));
        } finally {
          db.close();
        }
      };
      mkdirSync(ws.paths.landingDir, { recursive: true });
      copyFileSync(partnerFile, join(ws.dir, 'partner-day.ndjson'));
      renameSync(join(ws.dir, 'partner-day.ndjson'), join(ws.paths.landingDir, 'partner-day.ndjson'));
      await until(async () => (await served()).length > 0, 'the first slice served', 120_000);
      // an SDK upload, as the API writes one, and the score job, while the partner's file loads
      const upload = join(ws.paths.landingDir, uploadFileName(new Date()));
      writeNdjson(`${upload}.part`, [
        tripRecord({
          appId: ws.appId,
          tripId: 'sdk-1',
          userId: Number(SDK_USER),
          orgUserId: 'sdk-driver',
          start: '2026-11-20T20:00:00Z',
          seconds: 300,
        }),
      ]);
      renameSync(`${upload}.part`, upload);
      const score = runJobProcess('score', ['--data-dir', ws.dir, '--date', '2026-11-20'], env);
      let partnerServedWithUpload = -1;
      await until(
        async () => {
          const trips = await served();
          if (!trips.includes('sdk-1')) return false;
          partnerServedWithUpload = trips.filter((t) => t.startsWith('p-')).length;
          return true;
        },
        'the upload served',
        120_000,
      );
      // published between two slices of the partner's file, not after its last
      expect(partnerServedWithUpload).toBeGreaterThan(0);
      expect(partnerServedWithUpload).toBeLessThan(40);
      const scored = await score;
      expect(scored.code, scored.stderr).toBe(0);
      await until(
        async () => (await served()).filter((t) => t.startsWith('p-')).length === 40,
        'every trip served',
        120_000,
      );
      await until(() => !existsSync(join(ws.paths.landingDir, 'partner-day.ndjson')), 'the file archived');
      watch.child.kill('SIGTERM');
      expect((await watch.done).code).toBe(0);
      expect(await outcome(ws)).toEqual(await outcome(reference));
    } finally {
      watch.child.kill('SIGKILL');
      ws.cleanup();
    }
  });
});
