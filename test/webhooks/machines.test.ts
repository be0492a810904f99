// Webhooks across machines: two data folders (a job machine and an API machine) share one real
// PostgreSQL, where the outbox lives. The job machine loads and publishes as real jobs, its
// deliverer delivers and is killed with SIGKILL mid-stream; the API machine's deliverer, standing
// by, takes over within the lease and delivers every remaining trip.created; a job machine's
// deliverer started again stands by and takes the job machine's new event files in for it; the
// webhook API answers the same on either machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { pathsFor } from '../../src/data-folder.js';
import { closeStates } from '../../src/state/open.js';
import { closeSharedOutboxes } from '../../src/webhooks/open-outbox.js';
import { ROOT, runJobProcess } from '../helpers/job-process.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tripRecord } from '../helpers/trips.js';
import { writeNdjson } from '../helpers/workspace.js';

let pg: PgServer;
let url: string;
let receiver: Receiver;
const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.database();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
  await closeSharedOutboxes();
  await closeStates();
  await pg?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const machine = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `dds-${name}-`));
  dirs.push(dir);
  return dir;
};

function startDeliverer(dataDir: string) {
  const child = spawn(process.execPath, ['jobs/deliver.js', '--data-dir', dataDir, '--no-metrics'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
      DRIVING_WEBHOOK_POLL: '50ms',
      DRIVING_WEBHOOK_TIMEOUT: '30s',
      DRIVING_WEBHOOK_LEASE_MS: '2000',
    },
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  return { child, stderr: () => stderr, exited };
}

// the waits end a stuck process, not a slow one
async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Trips of two days ago (the machine's clock: the load job runs on it), one file per batch. */
function trips(appId: string, prefix: string, n: number): Record<string, unknown>[] {
  const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  return Array.from({ length: n }, (_, i) =>
    tripRecord({
      appId,
      tripId: `${prefix}-${i}`,
      userId: 10 + (i % 3),
      orgUserId: `d-${i % 3}`,
      start: `${day}T0${i % 9}:${String(10 + i).padStart(2, '0')}:00Z`,
      seconds: 300,
    }),
  );
}

const tripIdsOf = (r: Receiver, type = 'trip.created'): Set<string> =>
  new Set(
    r.received
      .map((got) => JSON.parse(got.rawBody.toString('utf8')) as { type: string; data: { tripId: string } })
      .filter((e) => e.type === type)
      .map((e) => e.data.tripId),
  );

describe('the outbox in PostgreSQL, across two machines', () => {
  it('a standby deliverer on another machine takes over after a SIGKILL and delivers every trip.created; the API answers alike on both', async () => {
    const jobDir = machine('job');
    const apiDir = machine('api');
    const store = new AppStore({ dataDir: jobDir, databaseUrl: url });
    const { appId, apiKey } = await store.add({ name: 'Fleet', timeZone: 'UTC' });
    // the first answers come at once; then the receiver holds its answers until released, so the
    // job machine's deliverer dies with attempts in flight
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver = await startReceiver((got) => (got.index < 4 ? { status: 204 } : { status: 204, until: held }));
    await store.setWebhook(appId, receiver.url);

    const first = trips(appId, 'a', 12);
    const load = await runJobProcess(
      'load',
      ['--data-dir', jobDir, '--input', writeNdjson(join(jobDir, 'in', 'a.ndjson'), first)],
      { DATABASE_URL: url },
    );
    expect(load.code, load.stderr).toBe(0);

    const jobDeliverer = startDeliverer(jobDir);
    await until(() => jobDeliverer.stderr().includes('holding the webhook-deliverer lease'));
    const standby = startDeliverer(apiDir);
    await until(() => standby.stderr().includes('another process holds the lease; standing by'));
    // the job machine's deliverer took its machine's files in and has attempts waiting on the receiver
    await until(() => receiver.received.length > 4);
    expect(readdirSync(pathsFor(jobDir).eventsDir)).toEqual([]);
    jobDeliverer.child.kill('SIGKILL');
    expect(await jobDeliverer.exited).toBe('SIGKILL');

    await until(() => standby.stderr().includes('holding the webhook-deliverer lease'));
    release();
    await until(() => tripIdsOf(receiver).size === first.length);
    expect([...tripIdsOf(receiver)].sort()).toEqual(first.map((t) => String(t['tripId'])).sort());

    // the job machine publishes again while its deliverer is down: its event files wait there, and
    // its deliverer, started again, stands by (the API machine's holds the lease) and takes them in
    const second = trips(appId, 'b', 5);
    const again = await runJobProcess(
      'load',
      ['--data-dir', jobDir, '--input', writeNdjson(join(jobDir, 'in', 'b.ndjson'), second)],
      { DATABASE_URL: url },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(pathsFor(jobDir).eventsDir).length).toBeGreaterThan(0);
    const restarted = startDeliverer(jobDir);
    await until(() => tripIdsOf(receiver).size === first.length + second.length);
    expect(restarted.stderr()).toContain('another process holds the lease; standing by');
    expect(restarted.stderr()).not.toContain('holding the webhook-deliverer lease');
    expect(readdirSync(pathsFor(jobDir).eventsDir)).toEqual([]);
    // nothing of the outbox on either machine's disk: it is PostgreSQL's
    expect(existsSync(pathsFor(jobDir).outboxFile)).toBe(false);
    expect(existsSync(pathsFor(apiDir).outboxFile)).toBe(false);

    // the webhook API on either machine reads the same deliveries and queues a re-send the
    // holder makes, wherever it runs
    const apis = await Promise.all(
      [jobDir, apiDir].map((dataDir) => createApi({ dataDir, databaseUrl: url, pollMs: 60_000 })),
    );
    try {
      const call = async (i: number, method: 'GET' | 'POST', path: string) => {
        const res = await (apis[i] as (typeof apis)[number]).app.inject({
          method,
          url: path,
          headers: { authorization: `Bearer ${apiKey}` },
        });
        return { status: res.statusCode, body: res.json() as Record<string, unknown> };
      };
      const delivered = async (i: number) => {
        const page = await call(i, 'GET', '/v1/webhooks/deliveries?limit=100');
        expect(page.status).toBe(200);
        return page.body['deliveries'] as { eventId: string; eventType: string; status: string }[];
      };
      await until(
        async () =>
          (await delivered(0)).filter((d) => d.eventType === 'trip.created' && d.status === 'delivered').length ===
          first.length + second.length,
      );
      const onJob = await delivered(0);
      expect(await delivered(1)).toEqual(onJob);
      const one = onJob.find((d) => d.eventType === 'trip.created') as { eventId: string };
      const before = receiver.received.filter((r) => r.headers['x-event-id'] === one.eventId).length;
      const resent = await call(1, 'POST', `/v1/webhooks/deliveries/${one.eventId}/resend`);
      expect(resent.status, JSON.stringify(resent.body)).toBeLessThan(300);
      await until(() => receiver.received.filter((r) => r.headers['x-event-id'] === one.eventId).length === before + 1);
      expect((await call(0, 'POST', '/v1/webhooks/deliveries/evt_none/resend')).status).toBe(404);
    } finally {
      for (const api of apis) await api.close();
    }

    // the operator's counts on either machine: the same outbox; the live state where the holder runs
    const counts = await Promise.all(
      [apiDir, jobDir].map(async (dataDir) => {
        const ran = await runJobProcess('webhooks', ['counts', '--json', '--data-dir', dataDir], { DATABASE_URL: url });
        expect(ran.code, ran.stderr).toBe(0);
        return JSON.parse(ran.stdout) as { counts: { app_id: string; status: string }[]; deliverer: unknown };
      }),
    );
    expect(counts[0]?.counts).toEqual(counts[1]?.counts);
    expect(counts[0]?.counts).toContainEqual(expect.objectContaining({ app_id: appId, status: 'delivered' }));
    expect(counts[0]?.deliverer).toMatchObject({ openEndpoints: [] });
    expect(counts[1]?.deliverer).toBeNull();

    for (const d of [standby, restarted]) d.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
    expect(await restarted.exited).toBe(0);
  });
});
