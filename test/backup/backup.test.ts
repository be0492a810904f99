// Backup and restore as an operator runs them, with real processes: a data folder served by
// serve.js and delivered by deliver.js while requests (reads, and writes to the state store) keep
// coming, backup.js taken meanwhile, restore.js into a new folder, the same answers from it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { runJobProcess, startJob } from '../helpers/job-process.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, steadyLoad, until, type ServeProcess } from '../helpers/serve-process.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { answers } from './api-answers.js';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';

const TMP = mkdtempSync(join(tmpdir(), 'dds-backup-'));
const DATA = join(TMP, 'data');
const BACKUP = join(TMP, 'backup');
const RESTORED = join(TMP, 'restored');
const LAST_DAY = '2026-11-20';
const SCORE_DATE = '2026-11-21';
const USERS = ['driver-00001', 'driver-00002', 'driver-00003', 'driver-00004'];
const LOOPBACK = { DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1' };

let apiKey = '';
const serves: ServeProcess[] = [];
const others: ChildProcess[] = [];

const ok = async (job: string, args: string[], env: Record<string, string> = {}) => {
  const ran = await runJobProcess(job, args, env);
  if (ran.code !== 0) throw new Error(`${job} ${args.join(' ')} exited ${ran.code}: ${ran.stderr}`);
  return ran;
};

/** Every event id in an outbox file (opened read-only; no deliverer may hold it). */
async function outboxEventIds(file: string): Promise<string[]> {
  const db = await openDatabase(file, { readOnly: true });
  try {
    return (await query(db.connection, 'select event_id from events order by event_id')).map((r) =>
      String(r['event_id']),
    );
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  // the folder to back up, made by the jobs' code in this process (no Node start and DuckDB load a
  // step): what is tested as processes is the serving, delivering, backup and restore below
  apiKey = (await new AppStore(pathsFor(DATA).appsFile).add({ name: 'Backup Fleet', timeZone: 'Europe/Berlin' }))
    .apiKey;
  await runGenerate({ dataDir: DATA, users: 4, days: 3, endDate: LAST_DAY });
  await runLoad({ dataDir: DATA });
  await runScore({ dataDir: DATA, date: SCORE_DATE });
});

afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  for (const c of others) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(serves.map((s) => s.exited));
  rmSync(TMP, { recursive: true, force: true });
});

describe('backup while everything runs, restore on a new folder', () => {
  it('answers every request the same from the restored folder, the same API key and token included', async () => {
    const original = await startServe(
      ['--data-dir', DATA, '--port', String(await freePort()), '--workers', '2', '--no-metrics'],
      LOOPBACK,
    );
    serves.push(original);
    // the deliverer holds the outbox read-write for the whole test
    const deliverer = startJob('deliver', ['--data-dir', DATA, '--no-metrics'], {
      ...LOOPBACK,
      DRIVING_WEBHOOK_POLL: '200ms',
    });
    others.push(deliverer.child);
    await until(() => existsSync(join(DATA, 'webhooks', 'deliverer.sock')), 'the deliverer to hold the outbox');
    const auth = { authorization: `Bearer ${apiKey}` };
    const reads = steadyLoad(
      `${original.url}/v1/org-user/driver-00001/trips?startTime=2026-11-01&endTime=2026-11-30`,
      auth,
      20,
    );
    // writes to the state store while the reads go on: a token, the webhook endpoint
    const tokenRes = await fetch(`${original.url}/v1/org-user/driver-00002/token`, { method: 'POST', headers: auth });
    expect(tokenRes.status).toBe(200);
    const token = ((await tokenRes.json()) as { token: string }).token;
    const put = await fetch(`${original.url}/v1/webhooks/endpoint`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', eventTypes: ['trip.created'] }),
    });
    expect(put.status).toBe(200);
    // more tokens issued while the backup runs
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing) {
        const res = await fetch(`${original.url}/v1/org-user/driver-00003/token`, { method: 'POST', headers: auth });
        expect(res.status).toBe(200);
        n++;
      }
      return n;
    })();
    const backup = await runJobProcess('backup', ['--to', BACKUP, '--data-dir', DATA, '--json']);
    writing = false;
    const written = await writer;
    const load = await reads.stop();
    expect(backup.code, backup.stderr).toBe(0);
    expect(load.failed).toEqual([]);
    expect(load.ok).toBeGreaterThan(0);
    expect(written).toBeGreaterThan(0);
    const result = JSON.parse(backup.stdout) as { files: number; outbox: string; counts: { landing: number } };
    expect(result.outbox).toBe('by the deliverer');
    expect(result.counts.landing).toBe(3);
    expect(backup.stderr).toMatch(/backup: state store: SQLite online backup/);
    // nothing but the finished folder is left beside it
    expect(readdirSync(TMP).filter((n) => n.includes('partial'))).toEqual([]);

    const restore = await runJobProcess('restore', ['--from', BACKUP, '--data-dir', RESTORED]);
    expect(restore.code, restore.stderr).toBe(0);
    // the warehouse came with the backup: its trips and scores, no file to load again
    expect(restore.stdout).toMatch(/warehouse restored, 0 of 3 archived file\(s\) loaded again/);
    const restored = await startServe(
      ['--data-dir', RESTORED, '--port', String(await freePort()), '--workers', '1', '--no-metrics'],
      LOOPBACK,
    );
    serves.push(restored);

    const extra = [`/v1/token/${token}`, '/v1/webhooks/endpoint'];
    const before = await answers({ url: original.url, apiKey }, USERS, '2026-11-01', '2026-11-30', extra);
    const after = await answers({ url: restored.url, apiKey }, USERS, '2026-11-01', '2026-11-30', extra);
    // the comparison is not empty: trips, routes and scores were answered with 200
    const statuses = Object.values(before).map((a) => (a as { status: number }).status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(40);
    expect(
      statuses.every((s) => s === 200),
      JSON.stringify(Object.entries(before).filter(([, a]) => (a as { status: number }).status !== 200)),
    ).toBe(true);
    expect((before[`/v1/token/${token}`] as { body: unknown }).body).toMatchObject({ orgUserId: 'driver-00002' });
    expect(after).toEqual(before);

    // the outbox: the deliverer stopped, its events are those of the copy
    deliverer.child.kill('SIGTERM');
    const stopped = await deliverer.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    const originalEvents = await outboxEventIds(join(DATA, 'webhooks', 'outbox.duckdb'));
    expect(originalEvents.length).toBeGreaterThan(0);
    expect(await outboxEventIds(join(RESTORED, 'webhooks', 'outbox.duckdb'))).toEqual(originalEvents);
  });

  it('refuses a damaged backup, naming the file, and restores nothing', async () => {
    const damaged = join(TMP, 'damaged');
    await ok('backup', ['--to', damaged, '--data-dir', DATA]);
    const manifest = JSON.parse(readFileSync(join(damaged, 'manifest.json'), 'utf8')) as { files: { path: string }[] };
    const archived = manifest.files.map((f) => f.path).find((p) => p.startsWith('landing/loaded/')) as string;
    // one byte more at the end of an archived trip file
    appendFileSync(join(damaged, archived), '\n');
    const target = join(TMP, 'from-damaged');
    const refused = await runJobProcess('restore', ['--from', damaged, '--data-dir', target]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`damaged backup: ${archived} has`);
    expect(existsSync(target)).toBe(false);
    // a changed byte of the same length is caught by its SHA-256
    const state = join(damaged, 'state', 'state.sqlite');
    const bytes = readFileSync(state);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(state, bytes);
    rmSync(join(damaged, archived));
    const missing = await runJobProcess('restore', ['--from', damaged, '--data-dir', target]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('damaged backup: state/state.sqlite does not match its SHA-256');
  });

  it('refuses a folder that is not empty, and a backup folder that exists', async () => {
    const busy = await runJobProcess('restore', ['--from', BACKUP, '--data-dir', DATA]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(/is not empty/);
    const again = await runJobProcess('backup', ['--to', BACKUP, '--data-dir', DATA]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists: a backup goes into a new folder/);
  });
});
