// A backup started while a load runs waits for the load to let go of the warehouse (a DuckDB file
// is consistent only while no writer holds it), then copies it and every trip file: restored, it
// holds every trip the finished load holds.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJobProcess, startJob } from '../helpers/job-process.js';
import { until } from '../helpers/serve-process.js';
import { pathsFor } from '../../src/data-folder.js';
import { warehouseRows } from '../helpers/workspace.js';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';

const TMP = mkdtempSync(join(tmpdir(), 'dds-backup-load-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** The trip files of a backup: those waiting in the landing area and those archived. */
function tripFiles(backup: string): string[] {
  const landing = join(backup, 'landing');
  const waiting = readdirSync(landing).filter((n) => n.endsWith('.ndjson'));
  const archive = join(landing, 'loaded');
  const archived = (existsSync(archive) ? readdirSync(archive, { recursive: true, encoding: 'utf8' }) : [])
    .filter((n) => n.endsWith('.ndjson'))
    .map((n) => n.split('/').pop() as string);
  return [...new Set([...waiting, ...archived])].sort();
}

const ok = async (job: string, args: string[]) => {
  const ran = await runJobProcess(job, args);
  if (ran.code !== 0) throw new Error(`${job} exited ${ran.code}: ${ran.stderr}`);
  return ran;
};

describe('a backup during a load', () => {
  it('waits for the load to let go of the warehouse, copies every trip file, and restores to what the load ends with', async () => {
    const data = join(TMP, 'data');
    // the folder made by the jobs' code in this process; the load and the backup are the processes
    await new AppStore(pathsFor(data).appsFile).add({ name: 'Busy Fleet' });
    await runGenerate({ dataDir: data, users: 3, days: 6, endDate: '2026-11-20' });
    const generated = readdirSync(join(data, 'landing'))
      .filter((n) => n.endsWith('.ndjson'))
      .sort();
    expect(generated).toHaveLength(6);
    // one file at a time, so the load holds the warehouse for several seconds
    const load = startJob('load', ['--data-dir', data], { DRIVING_LOAD_CONCURRENCY: '1' });
    let loading = true;
    void load.done.then(() => (loading = false));
    // the first file archived: the load is under way, and holds the warehouse until it ends
    await until(() => existsSync(join(data, 'landing', 'loaded')) || !loading, 'the load to archive a file');
    const startedDuring = loading;
    const to = join(TMP, 'backup');
    const backup = await runJobProcess('backup', ['--data-dir', data, '--to', to]);
    expect(backup.code, backup.stderr).toBe(0);
    expect((await load.done).code).toBe(0);
    // a backup started while the load ran waited for it, saying whom it waited for
    if (startedDuring) expect(backup.stderr).toMatch(/backup: warehouse: waiting for PID \d+ \(node .*jobs\/load\.js/);
    expect(tripFiles(to)).toEqual(generated);

    const restored = join(TMP, 'restored');
    await ok('restore', ['--from', to, '--data-dir', restored]);
    await runLoad({ dataDir: restored });
    const trips = (dir: string) =>
      warehouseRows(pathsFor(dir), 'select app_id, trip_id, user_id, started_at, ended_at from trips order by trip_id');
    const expected = await trips(data);
    expect(expected.length).toBeGreaterThan(10);
    expect(await trips(restored)).toEqual(expected);
  });
});
