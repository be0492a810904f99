// The landing area's smaller holes: a file gone between the listing and its turn, a name that is
// not UTF-8, a partner file still within its quiet period, a file written after it was taken, a
// link that made the idle watch run batch after batch, and the lag counted from a file's arrival
// rather than its modification time.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runWatch, type BatchOutcome } from '../../src/jobs/watch.js';
import { landingStatus } from '../../src/landing-status.js';
import { uploadFileName } from '../../src/load/uploads.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { until } from '../helpers/serve-process.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('UTC');
  mkdirSync(ws.paths.landingDir, { recursive: true });
});
afterEach(() => ws.cleanup());

const now = new Date('2026-11-21T08:00:00Z');
const trip = (id: string, hour = 8) =>
  tripRecord({
    appId: ws.appId,
    tripId: id,
    start: `2026-11-20T${String(hour).padStart(2, '0')}:00:00Z`,
    seconds: 600,
  });
const landing = (name: string) => join(ws.paths.landingDir, name);
const tripIds = async () =>
  (await warehouseRows(ws.paths, 'select trip_id from trips order by trip_id')).map((r) => r['trip_id']);
const archivedPaths = (): string[] => {
  const dir = join(ws.paths.landingDir, 'loaded');
  return existsSync(dir)
    ? readdirSync(dir).flatMap((day) => readdirSync(join(dir, day)).map((f) => join(dir, day, f)))
    : [];
};
const archived = (): string[] => {
  const dir = join(ws.paths.landingDir, 'loaded');
  return existsSync(dir) ? readdirSync(dir).flatMap((day) => readdirSync(join(dir, day))) : [];
};

/** The continuous load in this process, until `stop()`; each batch's outcome in `batches`. */
function watchInProcess(options: { quietMs?: number } = {}) {
  const abort = new AbortController();
  const batches: BatchOutcome[] = [];
  const done = runWatch({
    dataDir: ws.dir,
    pollMs: 100,
    gatherMs: 10,
    maxRestMs: 0,
    metricsDir: null,
    signal: abort.signal,
    onBatch: (b) => batches.push(b),
    ...options,
  });
  return {
    batches,
    stop: async () => {
      abort.abort();
      return done;
    },
  };
}

describe('landing intake: a file gone after the listing', () => {
  it('is skipped quietly and counted; the rest of the batch loads and nothing is set aside', async () => {
    writeNdjson(landing('a.ndjson'), [trip('a-1')]);
    writeNdjson(landing('b.ndjson'), [trip('b-1', 9)]);
    writeNdjson(landing('c.ndjson'), [trip('c-1', 10)]);
    // b.ndjson is renamed by its writer once the listing is done (while a.ndjson loads)
    const result = await runLoad({
      dataDir: ws.dir,
      now,
      concurrency: 1,
      afterStage: (file) => {
        if (file.endsWith('a.ndjson')) renameSync(landing('b.ndjson'), landing('b-renamed.ndjson'));
      },
    });
    expect(result.intake.vanished).toBe(1);
    expect(result.totals.filesFailed).toBe(0);
    expect(result.files.map((f) => f.file)).toEqual([landing('a.ndjson'), landing('c.ndjson')]);
    expect(await tripIds()).toEqual(['a-1', 'c-1']);
    expect(existsSync(join(ws.paths.landingDir, 'failed'))).toBe(false);
    // under its new name it is the next run's
    const next = await runLoad({ dataDir: ws.dir, now });
    expect(next.files.map((f) => f.file)).toEqual([landing('b-renamed.ndjson')]);
    expect(await tripIds()).toEqual(['a-1', 'b-1', 'c-1']);
  });
});

describe('landing intake: a name that is not UTF-8', () => {
  it('is counted as waiting, renamed to a valid name, loaded and counted', async () => {
    const raw = Buffer.concat([
      Buffer.from(`${ws.paths.landingDir}/day-`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('.ndjson'),
    ]);
    writeFileSync(raw, `${JSON.stringify(trip('latin-1'))}\n`);
    expect(landingStatus(ws.paths.landingDir)).toMatchObject({ waiting: 1, refused: 0 });
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.intake.renamed).toBe(1);
    expect(result.totals.filesFailed).toBe(0);
    expect(await tripIds()).toEqual(['latin-1']);
    expect(archived()).toEqual(['day-%FF%FE.ndjson']);
    expect(landingStatus(ws.paths.landingDir)).toMatchObject({ waiting: 0, failed: 0 });
  });
});

describe('landing intake: the quiet period', () => {
  it('leaves a partner file written within it for a later run, takes an SDK upload at once', async () => {
    writeNdjson(landing('partner.ndjson'), [trip('p-1')]);
    writeNdjson(landing(uploadFileName(new Date())), [trip('sdk-1', 9)]);
    const first = await runLoad({ dataDir: ws.dir, now, quietMs: 600_000, uploadBatchBytes: 0 });
    expect(first.intake.settling).toBe(1);
    expect(await tripIds()).toEqual(['sdk-1']);
    expect(existsSync(landing('partner.ndjson'))).toBe(true);
    // once it has been quiet that long (its modification time set back), it is taken
    const past = new Date(Date.now() - 700_000);
    utimesSync(landing('partner.ndjson'), past, past);
    const second = await runLoad({ dataDir: ws.dir, now, quietMs: 600_000 });
    expect(second.intake.settling).toBe(0);
    expect(await tripIds()).toEqual(['p-1', 'sdk-1']);
  });
});

describe('landing intake: a file written after it was taken', () => {
  it('is moved back from the archive and loaded again whole by the next run; a file rewritten under another inode is forgotten', async () => {
    const fd = openSync(landing('partner.ndjson'), 'a');
    try {
      writeSync(fd, `${JSON.stringify(trip('w-1'))}\n`);
      const first = await runLoad({ dataDir: ws.dir, now });
      expect(first.intake.retaken).toBe(0);
      expect(archived()).toEqual(['partner.ndjson']);
      // the writer's descriptor still open: this goes into the archived file
      writeSync(fd, `${JSON.stringify(trip('w-2', 9))}\n`);
    } finally {
      closeSync(fd);
    }
    const second = await runLoad({ dataDir: ws.dir, now });
    expect(second.intake.retaken).toBe(1);
    expect(second.files.map((f) => f.file)).toEqual([landing('partner.ndjson')]);
    expect(second.totals.tripsLoaded).toBe(2);
    expect(await tripIds()).toEqual(['w-1', 'w-2']);
    expect(archived()).toEqual(['partner.ndjson']);
    // rewritten under a new inode (as a purge does): not a writer's append, never taken again
    const [path] = archivedPaths();
    writeNdjson(`${path}.tmp`, [trip('w-1')]);
    renameSync(`${path}.tmp`, path as string);
    const third = await runLoad({ dataDir: ws.dir, now });
    expect(third.intake.retaken).toBe(0);
    expect(third.files).toEqual([]);
    expect(existsSync(join(ws.paths.landingDir, '.taken.json'))).toBe(false);
  });
});

describe('landing intake: a link in the idle watch', () => {
  it('runs at most one batch for it, and the landing status counts it refused, not waiting', async () => {
    const target = join(ws.dir, 'outside.ndjson');
    writeNdjson(target, [trip('outside-1')]);
    symlinkSync(target, landing('link.ndjson'));
    const watch = watchInProcess();
    try {
      await until(() => watch.batches.length >= 1, 'the first batch');
      // a few dozen polls of the idle watch: a link must not make any of them a batch
      const polls = Date.now() + 30 * 100;
      await until(() => Date.now() >= polls, 'thirty polls');
    } finally {
      await watch.stop();
    }
    expect(watch.batches.length).toBe(1);
    expect(watch.batches[0]?.result?.refused.map((r) => r.kind)).toEqual(['symbolic link']);
    expect(landingStatus(ws.paths.landingDir)).toMatchObject({ waiting: 0, refused: 1, oldestWaitingSeconds: null });
  });

  it('runs no batch for a partner file within its quiet period, and one once it is quiet', async () => {
    writeNdjson(landing('settling.ndjson'), [trip('s-1')]);
    const watch = watchInProcess({ quietMs: 600_000 });
    try {
      await until(() => watch.batches.length >= 1, 'the first batch');
      const polls = Date.now() + 30 * 100;
      await until(() => Date.now() >= polls, 'thirty polls');
      expect(watch.batches.length).toBe(1);
      expect(watch.batches[0]?.result?.intake.settling).toBe(1);
      expect(landingStatus(ws.paths.landingDir).waiting).toBe(1);
      // quiet now: the next poll makes a batch of it, with no change in the folder to wake it
      const past = new Date(Date.now() - 700_000);
      utimesSync(landing('settling.ndjson'), past, past);
      await until(() => watch.batches.some((b) => (b.result?.totals.tripsLoaded ?? 0) === 1), 'the file loaded');
    } finally {
      await watch.stop();
    }
  });
});

describe('landing intake: the lag counts from arrival', () => {
  it('of a generated file dropped long after it was written: oldest waiting and the lag are from its arrival', async () => {
    const hourAgo = new Date(Date.now() - 3600_000);
    const aside = join(ws.dir, 'generated.ndjson');
    writeNdjson(aside, [trip('gen-1')]);
    utimesSync(aside, hourAgo, hourAgo);
    renameSync(aside, landing('generated.ndjson'));
    const waiting = landingStatus(ws.paths.landingDir);
    expect(waiting.waiting).toBe(1);
    expect(waiting.oldestWaitingSeconds).toBeLessThan(600);
    const watch = watchInProcess({ quietMs: 0 });
    try {
      await until(() => watch.batches.some((b) => b.lags.length > 0), 'a batch that loads it');
    } finally {
      await watch.stop();
    }
    const lags = watch.batches.flatMap((b) => b.lags);
    expect(lags).toHaveLength(1);
    expect(lags[0]).toBeLessThan(600);
    rmSync(join(ws.paths.landingDir, 'loaded'), { recursive: true, force: true });
  });
});
