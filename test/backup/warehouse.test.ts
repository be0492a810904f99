// The warehouse in the backup: trips whose files left the landing archive (past its retention)
// live in the warehouse alone, and a backup + restore keeps them, with every answer equal; the
// copy is taken only while no job holds the warehouse, waiting for one (bounded) or failing
// clearly, naming it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdDatabase, runJobProcess, startJob } from '../helpers/job-process.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';
import { pathsFor } from '../../src/data-folder.js';
import { answers } from './api-answers.js';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';

const TMP = mkdtempSync(join(tmpdir(), 'dds-backup-wh-'));
const DATA = join(TMP, 'data');
const USERS = ['driver-00001', 'driver-00002'];
/** The old trips' days: their archive folder is renamed to this day, then pruned by the next load. */
const OLD_END = '2026-09-20';
const OLD_ARCHIVE_DAY = '2026-09-21';
let apiKey = '';
const serves: ServeProcess[] = [];

const ok = async (job: string, args: string[], env: Record<string, string> = {}) => {
  const ran = await runJobProcess(job, args, env);
  if (ran.code !== 0) throw new Error(`${job} ${args.join(' ')} exited ${ran.code}: ${ran.stderr}`);
  return ran;
};
const archivedFiles = (dir: string): string[] => {
  const archive = join(dir, 'landing', 'loaded');
  return existsSync(archive)
    ? readdirSync(archive, { recursive: true, encoding: 'utf8' })
        .filter((n) => n.endsWith('.ndjson'))
        .sort()
    : [];
};

beforeAll(async () => {
  // the folder to back up, made by the jobs' code in this process (no Node start and DuckDB load a
  // step): what is tested as processes is the backup, restore and serving below
  apiKey = (await new AppStore(pathsFor(DATA).appsFile).add({ name: 'Old Fleet', timeZone: 'Europe/Berlin' })).apiKey;
  await runGenerate({ dataDir: DATA, users: 2, days: 2, endDate: OLD_END });
  await runLoad({ dataDir: DATA });
  // as if that load ran long ago: its archive day is past the 30 days the next load keeps
  const loaded = join(DATA, 'landing', 'loaded');
  const [today] = readdirSync(loaded);
  renameSync(join(loaded, today as string), join(loaded, OLD_ARCHIVE_DAY));
  await runGenerate({ dataDir: DATA, users: 2, days: 2, endDate: '2026-11-20' });
  const said: string[] = [];
  await runLoad({ dataDir: DATA, progress: (line) => said.push(line) });
  expect(said.join('\n')).toMatch(/pruned 1 landing archive folder/);
  await runScore({ dataDir: DATA, date: '2026-11-21' });
});

afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  await Promise.all(serves.map((s) => s.exited));
  rmSync(TMP, { recursive: true, force: true });
});

describe('the warehouse in a backup', () => {
  it('keeps the trips older than the landing archive: a restore answers them, and everything else, as the original', async () => {
    // served before the backup, as a running installation is (the first start makes the cursor key)
    const original = await startServe([
      '--data-dir',
      DATA,
      '--port',
      String(await freePort()),
      '--workers',
      '1',
      '--no-metrics',
    ]);
    serves.push(original);
    const backup = join(TMP, 'backup');
    const ran = await ok('backup', ['--to', backup, '--data-dir', DATA, '--json']);
    const result = JSON.parse(ran.stdout) as { counts: { landing: number; warehouse: number } };
    expect(result.counts.warehouse).toBeGreaterThan(1);
    // the old trips' files are gone from the archive (and so from the backup's)
    expect(archivedFiles(backup)).toHaveLength(2);
    expect(archivedFiles(backup).some((f) => f.startsWith(OLD_ARCHIVE_DAY))).toBe(false);

    const restoredDir = join(TMP, 'restored');
    const restore = await ok('restore', ['--from', backup, '--data-dir', restoredDir]);
    expect(restore.stdout).toMatch(/warehouse restored, 0 of 2 archived file\(s\) loaded again/);
    const restored = await startServe([
      '--data-dir',
      restoredDir,
      '--port',
      String(await freePort()),
      '--workers',
      '1',
      '--no-metrics',
    ]);
    serves.push(restored);
    const before = await answers({ url: original.url, apiKey }, USERS, '2026-09-01', '2026-11-30');
    const after = await answers({ url: restored.url, apiKey }, USERS, '2026-09-01', '2026-11-30');
    // the old trips are among the answers: pages of September's trips, and their details
    const oldTrips = Object.entries(before).filter(
      ([path, a]) =>
        /\/trip\/[^/]+$/.test(path) &&
        JSON.stringify((a as { body: unknown }).body).includes(`"startTime":"${OLD_END.slice(0, 8)}`),
    );
    // every answer an answer (a refusal would cut a page short and hide the trips behind it)
    expect(Object.entries(before).filter(([, a]) => ![200, 404].includes((a as { status: number }).status))).toEqual(
      [],
    );
    expect(oldTrips.length).toBeGreaterThan(2);
    expect(after).toEqual(before);
  });

  it('waits for a job that holds the warehouse, and fails clearly, naming it, when the wait runs out', async () => {
    const held = await holdDatabase(pathsFor(DATA).warehouseFile);
    try {
      const refused = await runJobProcess('backup', ['--to', join(TMP, 'refused'), '--data-dir', DATA], {
        DRIVING_WAREHOUSE_LOCK_WAIT_MS: '1000',
      });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(`backup: warehouse: waiting for PID ${held.pid}`);
      expect(refused.stderr).toMatch(
        new RegExp(
          `warehouse\\.duckdb is in use by another process, PID ${held.pid} .*run it again when that job has finished`,
        ),
      );
      expect(readdirSync(TMP).filter((n) => n.includes('refused'))).toEqual([]);
      // a backup that is still waiting when the job lets go copies the warehouse then
      const waiting = startJob('backup', ['--to', join(TMP, 'waited'), '--data-dir', DATA]);
      let said = '';
      waiting.child.stderr?.on('data', (c: Buffer) => (said += c.toString()));
      await until(() => said.includes('backup: warehouse: waiting for PID'), 'the backup to wait for the warehouse');
      await held.release();
      const waited = await waiting.done;
      expect(waited.code, waited.stderr).toBe(0);
      expect(waited.stderr).toContain(`backup: warehouse: waiting for PID ${held.pid}`);
      expect(readdirSync(join(TMP, 'waited', 'warehouse'))).toContain('warehouse.duckdb');
    } finally {
      await held.release();
    }
  });
});
