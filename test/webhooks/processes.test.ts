// The deliverer and the operator CLI as real processes: jobs' events delivered end to end, the CLI
// answered through the running deliverer's control socket and directly when it is stopped, and a
// deliverer killed with SIGKILL in the middle of a batch losing nothing.
import { afterAll, describe, it, type TestContext } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runWebhooksCommand } from '../../src/jobs/webhooks.js';
import { verifyWebhook } from '../../src/webhooks/signature.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { appSecret, setWebhook, writeEvents } from './setup.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ENV = {
  ...process.env,
  DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
  DRIVING_WEBHOOK_POLL: '50ms',
  DRIVING_WEBHOOK_TIMEOUT: '2s',
};

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/**
 * A test's own data folder and receiver, gone when it ends: the tests run at once (each waits on
 * its processes, a lease or a receiver most of its time).
 */
async function begin(
  onTestFinished: TestContext['onTestFinished'],
  behaviour?: Parameters<typeof startReceiver>[0],
): Promise<{ ws: Workspace; receiver: Receiver }> {
  const ws = await workspace('UTC');
  const receiver = await startReceiver(behaviour);
  onTestFinished(async () => {
    // this test's processes only: the others' run on
    for (const child of children)
      if (child.exitCode === null && child.spawnargs.includes(ws.dir)) child.kill('SIGKILL');
    await receiver.close();
    ws.cleanup();
  });
  await setWebhook(ws, receiver.url);
  return { ws, receiver };
}

function startDeliverer(
  ws: Workspace,
  extraEnv: Record<string, string> = {},
): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['jobs/deliver.js', '--data-dir', ws.dir], {
    cwd: ROOT,
    env: { ...ENV, ...extraEnv },
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

function cli(ws: Workspace, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['jobs/webhooks.js', ...args, '--data-dir', ws.dir], { cwd: ROOT, env: ENV });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * What the outbox holds, asked in this process through the running deliverer's control socket: the
 * CLI's own code, without a Node start and a DuckDB load at every turn of a wait (the CLI as a
 * process is tested above and at the end of each test).
 */
async function outboxEvents(ws: Workspace, status: 'failed' | 'delivered'): Promise<number> {
  return ((await runWebhooksCommand(ws.dir, { op: 'list', appId: null, status, limit: 100 })) as { events: unknown[] })
    .events.length;
}
async function outboxCount(ws: Workspace, status: 'delivered'): Promise<number> {
  const { counts } = (await runWebhooksCommand(ws.dir, { op: 'counts' })) as {
    counts: { status: string; events: number }[];
  };
  return counts.find((c) => c.status === status)?.events ?? 0;
}

// the waits end a stuck process, not a slow one: on a busy machine a deliverer takes its time
async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.concurrent('the deliverer process', () => {
  it('delivers the trip.created events a load wrote, each verified by the receiver and counted once by id', async ({
    onTestFinished,
    expect,
  }) => {
    const { ws, receiver } = await begin(onTestFinished);
    const trips = Array.from({ length: 12 }, (_, i) =>
      tripRecord({
        appId: ws.appId,
        tripId: `t-${i}`,
        userId: 10 + (i % 3),
        orgUserId: `d-${i % 3}`,
        start: `2026-11-20T0${i % 9}:00:00Z`,
        seconds: 600,
      }),
    );
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'a.ndjson'), trips)],
      now: new Date('2026-11-21T12:00:00Z'),
    });
    const d = startDeliverer(ws);
    await receiver.waitFor(12);
    const secret = await appSecret(ws);
    const seen = new Map<string, Record<string, unknown>>();
    for (const got of receiver.received) {
      expect(verifyWebhook(got.rawBody, got.headers['authorization'], secret)).toBe(true);
      seen.set(String(got.headers['x-event-id']), JSON.parse(got.rawBody.toString('utf8')));
    }
    expect([...seen.values()].map((e) => (e['data'] as Record<string, unknown>)['tripId']).sort()).toEqual(
      trips.map((t) => t.tripId).sort(),
    );
    expect([...seen.values()][0]).toMatchObject({
      type: 'trip.created',
      appId: ws.appId,
      data: { status: 'normal', startTime: expect.stringMatching(/^2026-11-20 /) },
    });

    // the CLI reaches the running deliverer through its control socket
    const counts = await cli(ws, ['counts', '--json']);
    expect(counts.code).toBe(0);
    const parsed = JSON.parse(counts.stdout);
    expect(parsed.counts).toEqual([expect.objectContaining({ app_id: ws.appId, status: 'delivered', events: 12 })]);
    expect(parsed.deliverer).toMatchObject({ inFlight: 0, openEndpoints: [] });
    const id = [...seen.keys()][0] as string;
    const shown = await cli(ws, ['show', id]);
    expect(shown.stdout).toMatch(new RegExp(`${id} \\(trip.created, app ${ws.appId}\\): delivered, 1 attempt`));
    expect((await cli(ws, ['show', 'evt_missing'])).code).toBe(2);

    d.child.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    expect(d.stdout()).toMatch(/^deliver: 12 event\(s\) taken in from 1 file\(s\); 12 attempt\(s\): 12 delivered/);
    // stopped: the CLI opens the outbox itself
    const list = await cli(ws, ['list', '--status', 'delivered', '--limit', '5', '--json']);
    expect(JSON.parse(list.stdout).events).toHaveLength(5);
  });

  it('replays dead letters through the running deliverer', async ({ onTestFinished, expect }) => {
    const { ws, receiver } = await begin(onTestFinished, () => ({ status: 500 }));
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_x' }, { id: 'evt_y' }]);
    const d = startDeliverer(ws, { DRIVING_WEBHOOK_SCHEDULE: '50ms' });
    await until(async () => (await outboxEvents(ws, 'failed')) === 2);
    receiver.setBehaviour(() => ({ status: 200 }));
    const replay = await cli(ws, ['replay', '--app', ws.appId, '--since', '2026-01-01', '--json']);
    expect(JSON.parse(replay.stdout).queued.sort()).toEqual(['evt_x', 'evt_y']);
    await until(async () => (await outboxEvents(ws, 'delivered')) === 2);
    expect(JSON.parse((await cli(ws, ['list', '--status', 'delivered', '--json'])).stdout).events).toHaveLength(2);
    expect((await cli(ws, ['replay', 'evt_x'])).stdout).toMatch(/1 event\(s\) queued/);
    await receiver.waitFor(7);
    expect(receiver.received.map((r) => r.headers['x-event-id']).filter((x) => x === 'evt_x')).toHaveLength(4);
    d.child.kill('SIGTERM');
    expect(await d.exited).toBe(0);
  });

  it("a second deliverer stands by on the lease and takes over within its time of the first's death; each event is delivered once", async ({
    onTestFinished,
    expect,
  }) => {
    const { ws, receiver } = await begin(onTestFinished);
    const lease = { DRIVING_WEBHOOK_LEASE_MS: '2000' };
    const first = startDeliverer(ws, lease);
    await until(() => first.stderr().includes('holding the webhook-deliverer lease'));
    const second = startDeliverer(ws, lease);
    await until(() => second.stderr().includes('another process holds the lease; standing by'));
    // --once does not wait: the lease is held (busy, exit 3)
    const once = spawn(process.execPath, ['jobs/deliver.js', '--once', '--data-dir', ws.dir], {
      cwd: ROOT,
      env: { ...ENV, ...lease },
    });
    expect(await new Promise((resolve) => once.on('exit', resolve))).toBe(3);
    writeEvents(
      ws,
      'v1.ndjson',
      Array.from({ length: 20 }, (_, i) => ({ id: `evt_a${i}` })),
    );
    await receiver.waitFor(20);
    // recorded as delivered in the outbox (a kill before that would rightly deliver again, with the same id)
    await until(async () => (await outboxCount(ws, 'delivered')) === 20);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;
    await until(() => second.stderr().includes('holding the webhook-deliverer lease'), 30_000);
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    writeEvents(
      ws,
      'v2.ndjson',
      Array.from({ length: 20 }, (_, i) => ({ id: `evt_b${i}` })),
    );
    await receiver.waitFor(40);
    await new Promise((r) => setTimeout(r, 500));
    const ids = receiver.received.map((r) => String(r.headers['x-event-id']));
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('killed with SIGKILL in the middle of a batch, three times, delivers every event after restarts (duplicates keep their id)', async ({
    onTestFinished,
    expect,
  }) => {
    // 1,000 events are several batches: the kills land before, while and between batches as with more
    const N = 1_000;
    const { ws, receiver } = await begin(onTestFinished, () => ({ status: 200, delayMs: 2 }));
    const ids = Array.from({ length: N }, (_, i) => `evt_k${String(i).padStart(5, '0')}`);
    writeEvents(
      ws,
      'v1.ndjson',
      ids.slice(0, N / 2).map((id) => ({ id })),
    );
    writeEvents(
      ws,
      'v2.ndjson',
      ids.slice(N / 2).map((id) => ({ id })),
    );
    // a killed deliverer's lease runs out before the next one takes over: 2 s here, not the 20 s of
    // production (one deliverer at a time, so no standby can take a lease that is renewed late)
    const lease = { DRIVING_WEBHOOK_LEASE_MS: '2000' };
    // once as soon as it says it runs (before or while it takes the files in), then twice in the middle of delivering
    const started = startDeliverer(ws, lease);
    await until(() => started.stderr().includes('running'));
    started.child.kill('SIGKILL');
    await started.exited;
    for (const killAt of [150, 500]) {
      const d = startDeliverer(ws, lease);
      await receiver.waitFor(killAt);
      d.child.kill('SIGKILL');
      await d.exited;
    }
    const last = startDeliverer(ws, lease);
    await until(() => new Set(receiver.received.map((r) => String(r.headers['x-event-id']))).size === N);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    const bodies = new Map<string, string>();
    for (const got of receiver.received) {
      const id = String(got.headers['x-event-id']);
      const body = got.rawBody.toString('utf8');
      expect(JSON.parse(body).id).toBe(id);
      if (bodies.has(id)) expect(body).toBe(bodies.get(id));
      bodies.set(id, body);
    }
    expect([...bodies.keys()].sort()).toEqual(ids);
    const counts = JSON.parse((await cli(ws, ['counts', '--json'])).stdout).counts;
    expect(counts).toEqual([expect.objectContaining({ status: 'delivered', events: N })]);
    // what the kills cost: a few duplicates, never a loss
    expect(receiver.received.length - N).toBeLessThan(1_000);
    console.log(`kill test: ${receiver.received.length - N} duplicate deliveries of ${N} events over 3 SIGKILLs`);
  });
});
