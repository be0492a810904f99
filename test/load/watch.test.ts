// The continuous load (`load.js --watch`) as a real process: files are loaded and served as they
// arrive, with their events; a bad file fails alone and the stream goes on; a DELETE is purged
// without a new file; the score, a query and an export run beside it; SIGTERM finishes the batch
// in hand and exits 0; kill -9 anywhere loses nothing (the next start catches up).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestOf, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { runJobProcess, ROOT } from '../helpers/job-process.js';
import { PassportStore } from '../../src/passport/store.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';

interface Watcher {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
}

function startWatch(dataDir: string): Watcher {
  const child = spawn(process.execPath, ['jobs/load.js', '--data-dir', dataDir, '--watch', '--poll-ms', '200'], {
    cwd: ROOT,
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout })),
  );
  return { child, stderr: () => stderr, exited };
}

let ws: Workspace;
let ids: Map<string, number>;
let watcher: Watcher;
let fileNo = 0;

const trip = (org: string, tripId: string, hour: number) =>
  tripRecord({
    appId: ws.appId,
    tripId,
    userId: ids.get(org) as number,
    orgUserId: org,
    start: `2026-11-20T${String(hour).padStart(2, '0')}:00:00Z`,
    seconds: 300,
    events: [{ type: 'brake', from: 60, to: 63 }],
  });

/** Writes a landing file the way a writer should: a temp name, then a rename. */
function land(records: unknown[], name = `partner-${String(++fileNo).padStart(3, '0')}.ndjson`): string {
  const path = join(ws.paths.landingDir, name);
  writeNdjson(`${path}.tmp`, records);
  renameSync(`${path}.tmp`, path);
  return path;
}

const servedTrips = async (): Promise<string[]> => {
  const manifest = manifestOf(ws.paths);
  if (!manifest) return [];
  const slot = join(ws.paths.publishedDir, `slot-${manifest.slot}.duckdb`);
  return (await rowsOf(slot, 'select trip_id from trips order by trip_id', 5_000)).map((r) => String(r['trip_id']));
};

/** Rows of a DuckDB file opened read-only, as another job would: waiting its turn for a writer. */
async function rowsOf(file: string, sql: string, lockWaitMs: number): Promise<Record<string, unknown>[]> {
  const db = await openDatabase(file, { readOnly: true, lockWaitMs });
  try {
    return await query(db.connection, sql);
  } finally {
    db.close();
  }
}

const pendingEventTypes = (): string[] => {
  if (!existsSync(ws.paths.eventsDir)) return [];
  return readdirSync(ws.paths.eventsDir).flatMap((f) =>
    readFileSync(join(ws.paths.eventsDir, f), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const e = JSON.parse(l) as { type: string; data: { tripId?: string; orgUserId?: string } };
        return `${e.type} ${e.data.tripId ?? e.data.orgUserId}`;
      }),
  );
};

beforeAll(async () => {
  ws = await workspace('UTC');
  const passport = await PassportStore.open(ws.paths.passportFile);
  ids = await passport.ensureAccounts(ws.appId, ['u-1', 'u-2', 'u-3']);
  passport.close();
  watcher = startWatch(ws.dir);
});
afterAll(async () => {
  if (watcher.child.exitCode === null) watcher.child.kill('SIGKILL');
  ws.cleanup();
});

const served = (tripIds: string[]) =>
  expect.poll(servedTrips, { timeout: 60_000, interval: 100 }).toEqual(expect.arrayContaining(tripIds));

describe('load.js --watch', () => {
  it('loads and publishes each file as it arrives, and writes its trip.created events', async () => {
    land([trip('u-1', 'a1', 6)]);
    await served(['a1']);
    land([trip('u-1', 'a2', 7), trip('u-2', 'b1', 7)]);
    await served(['a1', 'a2', 'b1']);
    await expect
      .poll(pendingEventTypes, { timeout: 30_000 })
      .toEqual(expect.arrayContaining(['trip.created a1', 'trip.created a2', 'trip.created b1']));
  });

  it('sets a bad file aside alone and goes on with the next', async () => {
    // not UTF-8: the load cannot read it at all
    const bad = join(ws.paths.landingDir, 'bad-001.ndjson');
    writeFileSync(`${bad}.tmp`, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
    renameSync(`${bad}.tmp`, bad);
    land([trip('u-2', 'b2', 8)]);
    await served(['b2']);
    await expect.poll(() => existsSync(bad), { timeout: 30_000 }).toBe(false);
    const day = readdirSync(join(ws.paths.landingDir, 'failed'))[0] as string;
    expect(readdirSync(join(ws.paths.landingDir, 'failed', day))).toContain('bad-001.ndjson');
  });

  it('purges a deleted account without waiting for a new file', async () => {
    land([trip('u-3', 'c1', 9)]);
    await served(['c1']);
    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: ids.get('u-3') as number,
      orgUserId: 'u-3',
      requestedAt: new Date().toISOString(),
    });
    await expect.poll(servedTrips, { timeout: 60_000, interval: 100 }).not.toContain('c1');
    expect(
      await rowsOf(ws.paths.warehouseFile, "select count(*)::int as n from trips where trip_id = 'c1'", 60_000),
    ).toEqual([{ n: 0 }]);
  });

  it('lets the score, a re-derivation, a backup, an export and a query run beside it, while files keep arriving', async () => {
    let arriving = true;
    const stream = (async () => {
      for (let hour = 10; arriving && hour < 23; hour++) {
        land([trip('u-1', `s${hour}`, hour)]);
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
    const backupDir = join(ws.dir, '..', `${ws.dir.split('/').pop()}-backup`);
    const runs = {
      score: await runJobProcess('score', ['--data-dir', ws.dir, '--date', '2026-11-21']),
      rederive: await runJobProcess('load', ['--data-dir', ws.dir, '--rederive']),
      backup: await runJobProcess('backup', ['--data-dir', ws.dir, '--to', backupDir]),
      export: await runJobProcess('export', ['--data-dir', ws.dir]),
      sql: await runJobProcess('sql', ['--data-dir', ws.dir, '--file', 'sql/analyses/users.sql']),
    };
    arriving = false;
    await stream;
    for (const [job, ran] of Object.entries(runs))
      expect({ job, code: ran.code }, ran.stderr).toEqual({ job, code: 0 });
    expect(existsSync(join(backupDir, 'warehouse', 'warehouse.duckdb'))).toBe(true);
    rmSync(backupDir, { recursive: true, force: true });
    await served(['s10']);
  });

  it('finishes the batch in hand on SIGTERM and exits 0; kill -9 loses nothing and the next start catches up', async () => {
    land([trip('u-2', 'k1', 5)]);
    watcher.child.kill('SIGTERM');
    const ended = await watcher.exited;
    expect({ code: ended.code, signal: ended.signal }, watcher.stderr()).toEqual({ code: 0, signal: null });
    expect(ended.stdout).toMatch(/^load: watched .* batch\(es\)/m);
    // the file is loaded whole or still waiting, never half: the next watch takes what is left
    watcher = startWatch(ws.dir);
    await served(['k1']);
    // a kill -9 in the middle of a batch: the files land, the watch dies, a new one catches up
    land([trip('u-2', 'k2', 4)]);
    land([trip('u-2', 'k3', 3)]);
    await expect.poll(() => watcher.stderr(), { timeout: 30_000, interval: 10 }).toMatch(/k2|batch \d+:|partner-/);
    watcher.child.kill('SIGKILL');
    await watcher.exited;
    watcher = startWatch(ws.dir);
    await served(['k1', 'k2', 'k3']);
    expect(readdirSync(ws.paths.landingDir).filter((n) => n.endsWith('.ndjson'))).toEqual([]);
    // a stop asked once the watch is up (before, Node's default for the signal applies)
    await expect.poll(() => watcher.stderr(), { timeout: 30_000 }).toContain('load: watching');
    watcher.child.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);
  });
});
