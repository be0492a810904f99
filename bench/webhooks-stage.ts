import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AppStore } from '../src/apps/store.js';
import { pathsFor } from '../src/data-folder.js';
import { Outbox } from '../src/webhooks/outbox.js';
import { startNodeChild } from './child.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';

/** How long the dead-endpoint run goes on after the fast app's events are all delivered. */
const DEAD_OBSERVE_MS = 30_000;

export interface WebhooksBenchResult {
  fast: { events: number; seconds: number; perSecond: number };
  withDeadEndpoint: {
    fastPerSecond: number;
    deadEvents: number;
    observedSeconds: number;
    deadRequests: number;
    deadAttempts: number;
    deadShortCircuited: number;
    deadWithAttempt: number;
  };
}

/**
 * Webhooks: deliveries per second from the real deliverer process (jobs/deliver.js) to a fast
 * receiver in this process, then the same with a second app whose endpoint never answers (the
 * interface's 10 s timeout), with as many events pending for it.
 */
export async function benchWebhooks(ctx: BenchContext): Promise<WebhooksBenchResult> {
  const events = ctx.options.sizes.webhookEvents;
  const alone = await scenario(ctx, events, false);
  record(ctx, {
    stage: 'webhooks',
    metric: `deliveries/s to a fast loopback receiver (${events} events, from intake to the last answer)`,
    value: alone.perSecond,
    unit: '/s',
  });
  const beside = await scenario(ctx, events, true);
  const dead = beside.dead as NonNullable<typeof beside.dead>;
  record(ctx, {
    stage: 'webhooks',
    metric: `deliveries/s to the fast receiver while another endpoint never answers (${events} events each)`,
    value: beside.perSecond,
    unit: '/s',
  });
  record(ctx, {
    stage: 'webhooks',
    metric: `dead endpoint after ${dead.observedSeconds.toFixed(0)} s: events with an attempt / requests sent / attempts failed by the breaker`,
    value: `${dead.deadWithAttempt} of ${events} / ${dead.deadRequests} / ${dead.deadShortCircuited}`,
    unit: '',
  });
  return {
    fast: { events, seconds: alone.seconds, perSecond: alone.perSecond },
    withDeadEndpoint: { fastPerSecond: beside.perSecond, deadEvents: events, ...dead },
  };
}

async function scenario(ctx: BenchContext, events: number, withDead: boolean) {
  const dir = mkdtempSync(join(ctx.options.workDir, 'webhooks-'));
  const paths = pathsFor(dir);
  const fast = await receiver(true);
  const dead = withDead ? await receiver(false) : null;
  try {
    const store = new AppStore(paths.appsFile);
    const fastApp = (await store.add({ name: 'fast', webhookUrl: fast.url })).appId;
    writeEvents(paths.eventsDir, 'v000000000001.ndjson', fastApp, events, 'f');
    const deadApp = dead ? (await store.add({ name: 'dead', webhookUrl: dead.url })).appId : null;
    if (deadApp) writeEvents(paths.eventsDir, 'v000000000002.ndjson', deadApp, events, 'd');
    ctx.progress(
      `bench: webhooks: ${events} event(s) to a fast receiver${withDead ? `, and ${events} to one that never answers` : ''}`,
    );

    const started = performance.now();
    const deliverer = startNodeChild(
      withDead ? 'deliver (one endpoint dead)' : 'deliver',
      jobScript(ctx, 'deliver'),
      ['--data-dir', dir],
      {
        ...childOptions(ctx, false),
        env: { DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1', DRIVING_WEBHOOK_POLL: '100ms' },
      },
    );
    const exited = deliverer.done.then((r) => {
      throw new Error(
        `the deliverer exited (${r.exitCode}) after ${fast.count()} deliveries: ${r.stderrTail.slice(-3).join(' | ')}`,
      );
    });
    await Promise.race([fast.waitFor(events), exited]);
    const seconds = (performance.now() - started) / 1000;
    let deadSeen = null;
    if (dead) {
      await Promise.race([new Promise((r) => setTimeout(r, DEAD_OBSERVE_MS)), exited]);
      deadSeen = { observedSeconds: (performance.now() - started) / 1000, deadRequests: dead.count() };
      await dead.close(); // resets the hanging requests, so the deliverer can stop at once
    }
    exited.catch(() => undefined);
    deliverer.child.kill('SIGTERM');
    const run = await deliverer.done;
    ctx.children.push(run);
    if (run.exitCode !== 0)
      throw new Error(`the deliverer exited ${run.exitCode}: ${run.stderrTail.slice(-3).join(' | ')}`);
    if (!deadSeen || !deadApp) return { seconds, perSecond: events / seconds, dead: null };
    const outbox = await Outbox.open(paths.outboxFile, { readOnly: true });
    try {
      const [row] = await outbox.rows(
        `select count(*)::integer as attempts,
                count(*) filter (where a.error like 'circuit_open%')::integer as short_circuited,
                count(distinct a.seq)::integer as with_attempt
         from attempts as a join events as e using (seq)
         where e.app_id = $app`,
        { app: deadApp },
      );
      return {
        seconds,
        perSecond: events / seconds,
        dead: {
          ...deadSeen,
          deadAttempts: Number(row?.['attempts']),
          deadShortCircuited: Number(row?.['short_circuited']),
          deadWithAttempt: Number(row?.['with_attempt']),
        },
      };
    } finally {
      await outbox.close();
    }
  } finally {
    await fast.close();
    await dead?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An event file as the jobs write it: one trip.created per line. */
function writeEvents(dir: string, name: string, appId: string, count: number, prefix: string): void {
  mkdirSync(dir, { recursive: true });
  const createdAt = new Date().toISOString();
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(
      JSON.stringify({
        id: `evt_${prefix}${String(i).padStart(8, '0')}`,
        type: 'trip.created',
        createdAt,
        appId,
        data: {
          appId,
          orgUserId: `driver-${i % 1000}`,
          userId: 1_000_000 + (i % 1000),
          tripId: `trip-${prefix}-${i}`,
          status: 'normal',
          startTime: '2026-11-21 07:31:00',
          endTime: '2026-11-21 07:58:12',
        },
      }),
    );
  }
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
}

/** A loopback receiver that answers 204 at once, or (`answers` false) never. */
async function receiver(answers: boolean) {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const counted = () => {
      count++;
      for (const w of waiters) if (count >= w.n) w.resolve();
    };
    req.resume();
    req.on('end', () => {
      // a delivery counts once its answer is sent (or, at the dead endpoint, once it arrived)
      if (!answers) return counted();
      res.on('finish', counted);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed = false;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    count: () => count,
    waitFor: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
