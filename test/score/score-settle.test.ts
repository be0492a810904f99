// The load leaves both slots caught up (src/publish/settle.ts), so the score run that follows
// copies only the scores it changed: never the load's trips, events or statistics. What that
// moves is tested here: the score run's publish copies exactly its changed scores (counted, never
// timed); the API, serving all along, sees the new date's scores once the run has switched; a load
// killed while catching up the other slot leaves the last good state served and the next run ends
// where an uninterrupted one does; a damaged retired slot is never caught up but left, and the next
// publish that writes it rebuilds it in full.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runJobKilledOn } from '../helpers/job-process.js';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { PassportStore } from '../../src/passport/store.js';
import { createApi } from '../../src/api/http/server.js';
import { openDatabase } from '../../src/db/open.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { readManifest, slotFile, type Slot } from '../../src/publish/manifest.js';
import { publishedRows, warehouseRows, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';
import { tripRecord } from '../helpers/trips.js';
import { overwrite } from '../helpers/files.js';

const now = new Date('2026-11-21T12:00:00Z');
/** Several jobs, two of them as processes: minutes on a busy two-core machine (never a timing assertion). */
const SLOW = 360_000;

let ws: Workspace;
const dirs: string[] = [];
/** The drivers' platform user ids, from their passport accounts (the API finds a driver's score through it). */
let ids: Map<string, number>;
beforeEach(async () => {
  // every test starts from the same history: built once, copied
  ({ ws, built: ids } = await builtFolder('score-settle/history', 'UTC', async (w) => {
    ws = w;
    const passport = await PassportStore.open(ws.paths.passportFile);
    try {
      ids = await passport.ensureAccounts(ws.appId, ['d-1', 'd-2', 'd-3']);
    } finally {
      passport.close();
    }
    await history();
    return ids;
  }));
});
afterEach(() => {
  ws.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(removeBuiltFolders);

let step = 0;
const trip = (id: string, user: number, start: string) =>
  tripRecord({
    appId: ws.appId,
    tripId: id,
    userId: ids.get(`d-${user}`) as number,
    orgUserId: `d-${user}`,
    start,
    seconds: 900,
  });
const inputFile = (records: Record<string, unknown>[]) => writeNdjson(join(ws.dir, 'in', `${++step}.ndjson`), records);
const load = (records: Record<string, unknown>[], dir = ws.dir) =>
  runLoad({ dataDir: dir, inputs: [inputFile(records)], now });
const other = (slot: Slot): Slot => (slot === 'a' ? 'b' : 'a');

/** A slot's rows of every table (versions aside) and its version, read from the file itself. */
async function slotRows(dir: string, slot: Slot): Promise<Record<string, unknown>> {
  const db = await openDatabase(slotFile(join(dir, 'published'), slot), { readOnly: true });
  try {
    const rows = async (sql: string) => (await db.connection.runAndReadAll(sql)).getRowObjectsJson();
    return {
      version: await rows("select value from meta where key = 'version'"),
      trips: await rows('select * exclude (version) from trips order by app_id, trip_id'),
      events: await rows('select * exclude (version) from trip_events order by all'),
      stats: await rows('select * exclude (version) from stats_daily order by app_id, user_id, stat_date'),
      scores: await rows(
        'select * exclude (version, evaluated_at) from safety_scores order by app_id, user_id, interval_days, evaluation_date',
      ),
    };
  } finally {
    db.close();
  }
}

/** A flipped byte inside every block after the file's three 4 KiB headers (256 KiB blocks), as in test/serving/damage.test.ts. */
function damage(file: string): void {
  for (let at = 3 * 4096 + 100; at < statSync(file).size; at += 256 * 1024)
    overwrite(file, at, Buffer.from([readFileSync(file)[at]! ^ 0x01]));
}

/** Three drivers over two days, and a score as of the day after (where every test starts). */
async function history(): Promise<void> {
  await load([
    trip('a', 1, '2026-11-18T17:30:00Z'),
    trip('b', 2, '2026-11-18T08:00:00Z'),
    trip('c', 3, '2026-11-18T09:00:00Z'),
  ]);
  await runScore({ dataDir: ws.dir, date: '2026-11-19', now });
  await load([trip('d', 1, '2026-11-19T17:45:00Z'), trip('e', 2, '2026-11-19T08:15:00Z')]);
}

describe('a score run after a load', () => {
  it(
    'copies only the scores it changed into a slot the load left caught up, and the running API serves them once it ends',
    async () => {
      const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
      const api = await createApi({ dataDir: ws.dir, now: () => now, pollMs: 50 });
      try {
        const ask = async (url: string) =>
          api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
        const snapshotVersion = async () =>
          ((await api.app.inject({ method: 'GET', url: '/readyz' })).json() as { version: number }).version;
        // a day more, loaded while the API serves: the slot it retires is caught up once the API lets go of it
        const loaded = await load([trip('f', 3, '2026-11-20T09:30:00Z')]);
        const served = readManifest(ws.paths.manifestFile)!;
        expect(loaded.publish.settled).toMatchObject({ slot: other(served.slot), version: served.version });
        expect(loaded.publish.settled?.skipped).toBeUndefined();
        expect(await slotRows(ws.dir, other(served.slot))).toEqual(await slotRows(ws.dir, served.slot));

        const scored = await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
        const written = scored.runs[0]!.rowsWritten;
        expect(written).toBe(6);
        // the standby was at the load's version: the publish copied the six new scores, nothing of the load's
        expect(scored.publish).toMatchObject({
          published: true,
          slot: other(served.slot),
          fromVersion: served.version,
          rowsApplied: written,
        });
        expect(scored.publish.pack?.map((p) => p.section)).not.toContain('trips');

        // the manifest names the new version the moment the run ends; the API follows it at its next poll
        expect(readManifest(ws.paths.manifestFile)?.version).toBe(scored.publish.version);
        for (let i = 0; i < 200 && (await snapshotVersion()) !== scored.publish.version; i++)
          await new Promise((r) => setTimeout(r, 25));
        expect(await snapshotVersion()).toBe(scored.publish.version);
        const res = await ask('/v1/org-user/d-3/safety-score?interval=30');
        expect(res.statusCode).toBe(200);
        const score = (res.json() as { score: Record<string, unknown> }).score;
        const [expected] = await warehouseRows(
          ws.paths,
          "select safety_score from safety_scores where org_user_id = 'd-3' and interval_days = 30 and evaluation_date = '2026-11-21'",
        );
        expect(score['evaluationDate']).toBe('2026-11-21');
        expect(score['safetyScore']).toBeCloseTo(Number(expected?.['safety_score']), 2);
      } finally {
        await api.close();
      }
      // both slots end where a publish of the whole warehouse would: the served one holds every table's rows
      expect((await publishedRows(ws.paths, 'trips', 'trip_id')).map((t) => t['trip_id'])).toEqual([
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
      ]);
    },
    SLOW,
  );
});

/** Runs `node jobs/load.js` on `input`; with `killOn`, sends SIGKILL as soon as stderr shows that text. */
function loadJob(dataDir: string, input: string, killOn?: string): ReturnType<typeof runJobKilledOn> {
  return runJobKilledOn('load', ['--data-dir', dataDir, '--input', input], killOn);
}

describe('a load killed while it catches up the slot it retired', () => {
  it(
    'leaves its new snapshot served, and the next score run ends where an uninterrupted one does',
    async () => {
      const reference = mkdtempSync(join(tmpdir(), 'dds-ref-'));
      dirs.push(reference);
      cpSync(ws.dir, reference, { recursive: true });
      const input = inputFile([trip('f', 3, '2026-11-20T09:30:00Z')]);

      const killed = await loadJob(ws.dir, input, 'publish: catching up slot');
      expect(killed.signal).toBe('SIGKILL');
      const served = readManifest(ws.paths.manifestFile)!;
      // the switch came before: the new trip is served
      expect((await publishedRows(ws.paths, 'trips', 'trip_id')).map((t) => t['trip_id'])).toContain('f');
      const whole = await loadJob(reference, input);
      expect(whole.code, whole.stderr).toBe(0);
      // a load with nothing new would finish the catch-up (on a copy: the score run below must find it undone)
      const retried = mkdtempSync(join(tmpdir(), 'dds-retry-'));
      dirs.push(retried);
      cpSync(ws.dir, retried, { recursive: true });
      const again = await runLoad({ dataDir: retried, inputs: [], now });
      expect(again.publish).toMatchObject({
        published: false,
        settled: { slot: other(served.slot), version: served.version },
      });
      expect(again.publish.settled?.fromVersion).toBeLessThan(served.version);
      expect(await slotRows(retried, other(served.slot))).toEqual(await slotRows(retried, served.slot));

      // the score run catches up what the killed load left (its trips too), the uninterrupted one only scores
      const scored = await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
      const uninterrupted = await runScore({ dataDir: reference, date: '2026-11-21', now });
      expect(scored.publish.fromVersion).toBeLessThan(served.version);
      expect(uninterrupted.publish.fromVersion).toBe(served.version);
      for (const slot of ['a', 'b'] as const)
        expect(await slotRows(ws.dir, slot), slot).toEqual(await slotRows(reference, slot));
    },
    SLOW,
  );
});

describe('a damaged slot the load retires', () => {
  it(
    'is left behind, not caught up, and the next publish into it rebuilds it in full',
    async () => {
      const retiring = readManifest(ws.paths.manifestFile)!.slot;
      damage(slotFile(ws.paths.publishedDir, retiring));
      const log: string[] = [];
      const loaded = await runLoad({
        dataDir: ws.dir,
        inputs: [inputFile([trip('f', 3, '2026-11-20T09:30:00Z')])],
        now,
        progress: (m) => log.push(m),
      });
      expect(loaded.publish.slot).toBe(other(retiring));
      expect(loaded.publish.settled).toMatchObject({ slot: retiring, fromVersion: null });
      expect(loaded.publish.settled?.skipped).toMatch(/slot-.\.duckdb/);
      expect(log.some((l) => l.includes(`slot ${retiring} left behind for the next publish`))).toBe(true);

      const scored = await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
      expect(scored.publish).toMatchObject({
        published: true,
        slot: retiring,
        corruptSlotRebuilt: true,
        fromVersion: 0,
      });
      const rebuilt = await slotRows(ws.dir, retiring);
      const kept = await slotRows(ws.dir, other(retiring));
      for (const table of ['trips', 'events', 'stats']) expect(rebuilt[table], table).toEqual(kept[table]);
      expect(rebuilt['version']).toEqual([{ value: String(scored.publish.version) }]);
      expect(rebuilt['scores']).toHaveLength((await warehouseRows(ws.paths, 'select 1 from safety_scores')).length);
    },
    SLOW,
  );
});
