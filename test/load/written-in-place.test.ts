// A partner file written in place (no temporary name, its writer's descriptor kept open) while
// the continuous load runs as a real process: with the quiet period it is taken only once its
// writer has stopped; with a tiny one it is taken mid-write, and what its writer appends to the
// archived file afterwards is seen and the file taken again whole. Either way no record is lost.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { startJob } from '../helpers/job-process.js';
import { publishedRows, workspace, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { until } from '../helpers/serve-process.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('UTC');
  mkdirSync(ws.paths.landingDir, { recursive: true });
});
afterEach(() => ws.cleanup());

const trip = (n: number) =>
  tripRecord({
    appId: ws.appId,
    tripId: `inplace-${String(n).padStart(2, '0')}`,
    start: `2026-11-20T${String(n).padStart(2, '0')}:00:00Z`,
    seconds: 600,
  });
const ids = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `inplace-${String(from + i).padStart(2, '0')}`);

function startWatch(quietMs: number) {
  return startJob('load', ['--data-dir', ws.dir, '--watch', '--poll-ms', '100'], {
    DRIVING_LANDING_QUIET_MS: String(quietMs),
  });
}

const served = async (): Promise<string[]> => {
  try {
    return (await publishedRows(ws.paths, 'trips', 'trip_id')).map((r) => String(r['trip_id']));
  } catch {
    // the slot in the middle of its switch: looked at again
    return [];
  }
};

const archivedPaths = (): string[] => {
  const dir = join(ws.paths.landingDir, 'loaded');
  return existsSync(dir)
    ? readdirSync(dir).flatMap((day) => readdirSync(join(dir, day)).map((f) => join(dir, day, f)))
    : [];
};

const eventTypes = (): string[] =>
  existsSync(ws.paths.eventsDir)
    ? readdirSync(ws.paths.eventsDir).flatMap((f) =>
        readFileSync(join(ws.paths.eventsDir, f), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { type: string }).type),
      )
    : [];

/** Appends trips `from`..`to` to the open descriptor, one line every 300 ms. */
async function append(fd: number, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) {
    writeSync(fd, `${JSON.stringify(trip(n))}\n`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('a partner file written in place beside the continuous load', () => {
  it('with the quiet period, is taken only once its writer stopped: every record served, taken once', async () => {
    const watch = startWatch(3_000);
    try {
      const fd = openSync(join(ws.paths.landingDir, 'partner-day.ndjson'), 'a');
      try {
        await append(fd, 1, 12);
      } finally {
        closeSync(fd);
      }
      await until(async () => (await served()).length === 12, 'all twelve trips served', 120_000);
      expect(await served()).toEqual(ids(1, 12));
    } finally {
      watch.child.kill('SIGTERM');
    }
    const { stderr } = await watch.done;
    expect(stderr).not.toMatch(/changed_during_load|taken again whole/);
    expect(archivedPaths().map((p) => p.split('/').pop())).toEqual(['partner-day.ndjson']);
  });

  it('with a tiny quiet period, is taken mid-write, then taken again whole once written to: every record served', async () => {
    const watch = startWatch(100);
    try {
      const fd = openSync(join(ws.paths.landingDir, 'partner-day.ndjson'), 'a');
      try {
        await append(fd, 1, 5);
        // the writer pauses; the load takes what is there and archives it, and the writer, its
        // descriptor still open, goes on writing into the archived file
        await until(() => archivedPaths().length > 0, 'the file taken and archived', 120_000);
        await until(async () => (await served()).length === 5, 'the first five served', 120_000);
        await append(fd, 6, 10);
      } finally {
        closeSync(fd);
      }
      await until(async () => (await served()).length === 10, 'all ten trips served', 120_000);
      expect(await served()).toEqual(ids(1, 10));
    } finally {
      watch.child.kill('SIGTERM');
    }
    const { stderr } = await watch.done;
    expect(stderr).toMatch(/written after it was loaded, taken again whole/);
    // the five loaded twice came back equal: replaced, and announced once
    expect(eventTypes().filter((t) => t === 'trip.created')).toHaveLength(10);
    expect(eventTypes().filter((t) => t === 'trip.updated')).toEqual([]);
    // archived once, whole: the first archive's inode went back into the landing area
    expect(archivedPaths().map((p) => p.split('/').pop())).toEqual(['partner-day.ndjson']);
  });
});
