// A score run publishes what it changed: a date scored again writes, copies into the slot and adds
// to the serving pack only the scores whose values changed (counted here, never timed), removes
// the scores it no longer gives, and ends exactly where a full publish of the same warehouse does
// (slot rows and every user's pack rows). A score job killed mid publish leaves the last good
// snapshot served, and running it again finishes the work.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runJobKilledOn } from '../helpers/job-process.js';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathsFor } from '../../src/data-folder.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore, type ScoreResult } from '../../src/jobs/score.js';
import { readManifest } from '../../src/publish/manifest.js';
import { EXTRAS_SUFFIX, SECTIONS, type Section } from '../../src/serving/format.js';
import { SectionFile, visibleRows } from '../../src/serving/pack.js';
import { publishedRows, warehouseRows, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';
import { tripRecord } from '../helpers/trips.js';

const DATE = '2026-11-21';
const now = new Date('2026-11-21T12:00:00Z');
const later = (hours: number) => new Date(now.getTime() + hours * 3_600_000);

let ws: Workspace;
/** The first score run of DATE over threeDrivers(), as every test starts from it. */
let first: ScoreResult;
const dirs: string[] = [];
beforeEach(async () => {
  // every test starts from the same folder (three drivers loaded, DATE scored): built once, copied
  ({ ws, built: first } = await builtFolder('score-publish/three-drivers-scored', 'America/New_York', async (w) => {
    ws = w;
    await threeDrivers();
    return runScore({ dataDir: w.dir, date: DATE, now });
  }));
});
afterEach(() => {
  ws.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(removeBuiltFolders);

let step = 0;
const trip = (id: string, user: number, start: string) =>
  tripRecord({ appId: ws.appId, tripId: id, userId: user, orgUserId: `d-${user}`, start, seconds: 900 });
const load = (records: Record<string, unknown>[]) =>
  runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', `${++step}.ndjson`), records)], now });

/** Three drivers on 2026-11-19; d-1 drives in the evening rush hour, so ranks lowest. */
async function threeDrivers(): Promise<void> {
  await load([
    trip('a', 1, '2026-11-19T17:30:00-05:00'),
    trip('b', 2, '2026-11-19T08:00:00-05:00'),
    trip('c', 3, '2026-11-19T09:00:00-05:00'),
  ]);
}

/** The date's scores in the warehouse, by user and interval. */
const scoresOf = (dir: string) =>
  warehouseRows(
    pathsFor(dir),
    'select * exclude (version) from safety_scores where evaluation_date = (select max(evaluation_date) from safety_scores) order by user_id, interval_days',
  );

/** Every user's rows of every pack section as the API reads them through the layers: payload and extra bytes. */
function packRows(dir: string): Record<Section, Record<string, string[]>> {
  const paths = pathsFor(dir);
  const manifest = readManifest(paths.manifestFile);
  if (!manifest?.pack) throw new Error('no serving pack');
  const out = {} as Record<Section, Record<string, string[]>>;
  for (const section of SECTIONS) {
    const files = manifest.pack.files[section]
      .map((name) => SectionFile.open(join(paths.publishedDir, name), section))
      .reverse();
    try {
      const byUser: Record<string, string[]> = {};
      for (const appId of Object.keys(manifest.pack.zones)) {
        const users = new Set(files.flatMap((f) => f.usersOf(appId)));
        for (const userId of [...users].sort((x, y) => x - y)) {
          const rows = visibleRows(files, section, appId, userId);
          const list: string[] = [];
          for (let n = 0; n < rows.count; n++) {
            const row = (rows.files[rows.layer[n] as number] as SectionFile).userRows(appId, userId)[
              rows.index[n] as number
            ];
            list.push(`${row?.key} ${row?.aux} ${row?.payloadBytes().toString()} ${row?.extraBytes().toString()}`);
          }
          if (list.length > 0) byUser[`${appId}/${userId}`] = list;
        }
      }
      out[section] = byUser;
    } finally {
      for (const f of files) f.close();
    }
  }
  return out;
}

/** What the API is served from: the current slot's tables and the pack's rows. */
async function served(dir: string) {
  const paths = pathsFor(dir);
  return {
    scores: await publishedRows(paths, 'safety_scores', 'app_id, user_id, interval_days, evaluation_date', ['version']),
    trips: await publishedRows(paths, 'trips', 'app_id, trip_id', ['version']),
    stats: await publishedRows(paths, 'stats_daily', 'app_id, user_id, stat_date', ['version']),
    pack: packRows(dir),
  };
}

/** The same warehouse published in full into a folder of its own (no slot, no pack before). */
async function fullPublish(from: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-full-'));
  dirs.push(dir);
  // the state store (apps, accounts) as it is on disk; SQLite's shared-memory index is its own process's
  cpSync(join(from, 'state'), join(dir, 'state'), { recursive: true, filter: (f) => !f.endsWith('-shm') });
  cpSync(join(from, 'warehouse'), join(dir, 'warehouse'), { recursive: true });
  await runLoad({ dataDir: dir, inputs: [], now });
  return dir;
}

/** Every file the manifest names exists and has the checksum the manifest records. */
function manifestIntact(dir: string): void {
  const paths = pathsFor(dir);
  const manifest = readManifest(paths.manifestFile);
  const names = Object.values(manifest?.pack?.files ?? {})
    .flat()
    .flatMap((n) => [n, `${n}${EXTRAS_SUFFIX}`]);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) {
    expect(
      createHash('sha256')
        .update(readFileSync(join(paths.publishedDir, name)))
        .digest('hex'),
      name,
    ).toBe(manifest?.pack?.sha256?.[name]);
  }
}

const scoresBuilt = (r: ScoreResult) => (r.publish.pack ?? []).filter((b) => b.section === 'scores');

describe('a score run publishes what it changed', () => {
  it('a date scored again writes and publishes only the changed scores, and ends where a full publish does', async () => {
    expect(first.runs[0]).toMatchObject({ users: 3, rowsWritten: 6, rowsRemoved: 0 });

    // the same data again: no score changes, no score row copied, the pack's scores kept as they are
    const before = await scoresOf(ws.dir);
    const same = await runScore({ dataDir: ws.dir, date: DATE, now: later(1) });
    expect(same.runs[0]).toMatchObject({ users: 3, rowsWritten: 0, rowsRemoved: 0 });
    expect(scoresBuilt(same)).toEqual([]);
    expect(await scoresOf(ws.dir)).toEqual(before); // evaluation times included: the values were computed then

    // one more evening trip of d-1 inside the window: d-1's two scores change, nobody else's
    await load([trip('d', 1, '2026-11-20T17:45:00-05:00')]);
    const changed = await runScore({ dataDir: ws.dir, date: DATE, now: later(2) });
    const after = await scoresOf(ws.dir);
    // a plain comparison of the rows before and after, evaluation time aside
    const strip = (r: Record<string, unknown>) => JSON.stringify({ ...r, evaluated_at: null });
    const differing = after.filter((r, i) => strip(r) !== strip(before[i] as Record<string, unknown>));
    expect(after).toHaveLength(before.length);
    expect(differing.map((r) => `${String(r['org_user_id'])}/${String(r['interval_days'])}`)).toEqual([
      'd-1/30',
      'd-1/90',
    ]);
    expect(changed.runs[0]).toMatchObject({ users: 3, rowsWritten: 2, rowsRemoved: 0 });
    // the pack gets a delta of those two rows, not the date, not the history
    expect(scoresBuilt(changed).map((b) => b.rows)).toEqual([2]);
    // the unchanged users keep their rows as they were
    expect(after.filter((r) => r['org_user_id'] !== 'd-1')).toEqual(before.filter((r) => r['org_user_id'] !== 'd-1'));

    const full = await fullPublish(ws.dir);
    expect(await served(ws.dir)).toEqual(await served(full));
    // and the other slot, brought up to date by one more publish, holds the same
    await runScore({ dataDir: ws.dir, date: DATE, now: later(3) });
    expect(await served(ws.dir)).toEqual(await served(full));
  });

  it('a score a re-run no longer gives leaves the slot and the pack, as in a full publish', async () => {
    // d-3's only trip is sent again on the evaluation date itself: outside the window, no score for d-3
    await load([trip('c', 3, '2026-11-21T00:30:00-05:00')]);
    const removed = await runScore({ dataDir: ws.dir, date: DATE, now: later(1) });
    expect(removed.runs[0]).toMatchObject({ users: 2, rowsRemoved: 2 });
    const state = await served(ws.dir);
    expect(state.scores.filter((r) => r['org_user_id'] === 'd-3')).toEqual([]);
    expect(
      Object.values(state.pack.scores)
        .flat()
        .filter((row) => row.includes(`"${DATE}"`)),
    ).toHaveLength(4);
    expect(state).toEqual(await served(await fullPublish(ws.dir)));
  });
});

/** Runs `node jobs/score.js`; with `killOn`, sends SIGKILL as soon as stderr shows that text. */
function scoreJob(dataDir: string, killOn?: string): ReturnType<typeof runJobKilledOn> {
  return runJobKilledOn('score', ['--data-dir', dataDir, '--date', DATE], killOn);
}

describe('a score job killed with SIGKILL mid publish', () => {
  for (const killOn of ['score: publishing', 'serving pack: scores']) {
    it(`at "${killOn}" leaves the last good snapshot served, and a rerun finishes`, async () => {
      await load([trip('d', 1, '2026-11-20T17:45:00-05:00')]);
      const reference = mkdtempSync(join(tmpdir(), 'dds-ref-'));
      dirs.push(reference);
      cpSync(ws.dir, reference, { recursive: true });
      const lastGood = readManifest(ws.paths.manifestFile);

      const killed = await scoreJob(ws.dir, killOn);
      expect(killed.signal).toBe('SIGKILL');
      // the manifest is the last good one or the new one whole, and names only intact files
      const afterKill = readManifest(ws.paths.manifestFile);
      expect([lastGood?.version, (lastGood?.version ?? 0) + 1]).toContain(afterKill?.version);
      manifestIntact(ws.dir);

      const rerun = await scoreJob(ws.dir);
      expect(rerun.code, rerun.stderr).toBe(0);
      const uninterrupted = await scoreJob(reference);
      expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
      manifestIntact(ws.dir);
      // evaluation times differ by the runs' clocks; everything else is the same
      const noTimes = async (dir: string) => {
        const s = await served(dir);
        return { ...s, scores: s.scores.map((r) => ({ ...r, evaluated_at: null })), pack: { ...s.pack, scores: null } };
      };
      expect(await noTimes(ws.dir)).toEqual(await noTimes(reference));
      expect(await scoresOf(ws.dir).then((rows) => rows.map((r) => ({ ...r, evaluated_at: null })))).toEqual(
        await scoresOf(reference).then((rows) => rows.map((r) => ({ ...r, evaluated_at: null }))),
      );
    });
  }
});
