// A load killed with SIGKILL at any point and run again ends exactly as an uninterrupted one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
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
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { runLoad } from '../../src/jobs/load.js';

const ROOT = join(import.meta.dirname, '..', '..');
// four files: a kill after the second leaves at least one unread, whatever the third's timing; each
// file a load reads costs a fixed derivation chain, so fewer files are most of what the test costs
const FILES = 4;

let reference: Workspace;
let inputDir: string;

/** Runs `node jobs/load.js`; with `killOn`, sends SIGKILL as soon as stderr shows that text. */
function load(
  dataDir: string,
  killOn?: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['jobs/load.js', '--data-dir', dataDir, '--input', inputDir], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (killOn && stderr.includes(killOn)) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function servedState(ws: Workspace) {
  return {
    trips: await publishedRows(ws.paths, 'trips', 'app_id, trip_id'),
    events: await publishedRows(ws.paths, 'trip_events', 'app_id, trip_id, event_index'),
    stats: await publishedRows(ws.paths, 'stats_daily', 'app_id, user_id, stat_date'),
    ledger: await warehouseRows(ws.paths, 'select path, bytes from loaded_files order by path'),
    quarantine: await warehouseRows(ws.paths, 'select source_file, line_no, reason from quarantine order by all'),
    points: await pointsState(ws),
  };
}

async function pointsState(ws: Workspace) {
  const db = await openDatabase(':memory:');
  try {
    const files = readdirSync(ws.paths.pointsDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet'))
      .sort();
    const rows = await query(
      db.connection,
      `select count(*)::int as n, sum(hash(app_id, trip_id, t))::varchar as h from read_parquet($glob)`,
      { glob: join(ws.paths.pointsDir, '**', '*.parquet') },
    );
    return { files, rows };
  } finally {
    db.close();
  }
}

/** A workspace with the same app as the reference, so the same files load the same way. */
async function cloneOfReferenceApps(): Promise<Workspace> {
  return sameApps(reference);
}

beforeAll(async () => {
  reference = await workspace('Europe/Berlin');
  inputDir = join(reference.dir, 'in');
  for (let f = 0; f < FILES; f++) {
    // 80 trips a file (25 drivers): each file still takes a while to load, so the kill lands between files
    const records = Array.from({ length: 80 }, (_, i) =>
      tripRecord({
        appId: reference.appId,
        tripId: `f${f}-t${i}`,
        userId: 100 + (i % 25),
        orgUserId: `d-${i % 25}`,
        start: `2026-11-${String(10 + f).padStart(2, '0')}T${String(6 + (i % 15)).padStart(2, '0')}:00:00+01:00`,
        seconds: 600,
        speed: (s) => 8 + (s % 9),
        events: i % 4 === 0 ? [{ type: 'brake', from: 30, to: 33 }] : [],
      }),
    );
    records.push('{"broken": ');
    writeNdjson(join(inputDir, `day-${f}.ndjson`), records);
  }
  // the uninterrupted load in this process: the same code as the job's, without a Node start
  await runLoad({ dataDir: reference.dir, inputs: [inputDir] });
}, 300_000);
afterAll(() => reference.cleanup());

describe('a load killed with SIGKILL', () => {
  for (const [when, marker] of [
    ['in the middle of the files', `[2/${FILES}]`],
    ['while publishing', 'load: publishing'],
  ] as const) {
    it(`${when}, then run again, ends exactly as an uninterrupted load`, async () => {
      const ws = await cloneOfReferenceApps();
      try {
        const killed = await load(ws.dir, marker);
        expect(killed.signal).toBe('SIGKILL');
        if (marker.startsWith('[')) {
          // the kill really interrupted the load: some files are in, nothing is published yet
          expect(manifestOf(ws.paths)).toBeNull();
          const ledger = await warehouseRows(ws.paths, 'select count(*)::int as n from loaded_files');
          expect(ledger[0]?.['n']).toBeGreaterThanOrEqual(2);
          expect(ledger[0]?.['n']).toBeLessThan(FILES);
        }
        const again = await load(ws.dir);
        expect(again.code, again.stderr).toBe(0);
        expect(await servedState(ws)).toEqual(await servedState(reference));
      } finally {
        ws.cleanup();
      }
    });
  }
});
