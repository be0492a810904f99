import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppStore } from '../apps/store.js';
import { pathsFor } from '../config.js';
import { Outbox } from '../webhooks/outbox.js';
import type { Progress } from '../progress.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface WebhookBenchOptions {
  /** Events to the fast receiver (and, in the second run, to the dead one as well). */
  events: number;
  /** How long the dead-endpoint run goes on after the fast app's events are all delivered (ms). */
  deadObserveMs: number;
  progress: Progress;
}

export interface WebhookBenchResult {
  fast: { events: number; seconds: number; perSecond: number; peakRssMb: number };
  withDeadEndpoint: {
    fastEvents: number;
    fastSeconds: number;
    fastPerSecond: number;
    deadEvents: number;
    observedSeconds: number;
    deadRequestsReceived: number;
    deadAttemptsRecorded: number;
    deadShortCircuited: number;
    deadWithAttempt: number;
    peakRssMb: number;
  };
}

/**
 * Deliveries per second from the real deliverer process to a fast receiver in this process, and
 * the same beside an endpoint that never answers (the interface's 10 s timeout).
 */
export async function benchWebhooks(options: WebhookBenchOptions): Promise<WebhookBenchResult> {
  const alone = await runScenario(options, false);
  const beside = await runScenario(options, true);
  if (!beside.dead) throw new Error('the dead-endpoint run reported nothing of the dead endpoint');
  return {
    fast: alone.fast,
    withDeadEndpoint: { fastEvents: beside.fast.events, fastSeconds: beside.fast.seconds, fastPerSecond: beside.fast.perSecond, ...beside.dead, peakRssMb: beside.fast.peakRssMb },
  };
}

async function runScenario(options: WebhookBenchOptions, withDead: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-webhooks-'));
  const paths = pathsFor(dir);
  const fastReceiver = await receiver(() => true);
  const deadReceiver = withDead ? await receiver(() => false) : null;
  try {
    const store = new AppStore(paths.appsFile);
    const fastApp = (await store.add({ name: 'fast', webhookUrl: fastReceiver.url })).appId;
    const deadApp = deadReceiver ? (await store.add({ name: 'dead', webhookUrl: deadReceiver.url })).appId : null;
    writeEventFile(paths.eventsDir, 'v000000000001.ndjson', fastApp, options.events, 'f');
    if (deadApp) writeEventFile(paths.eventsDir, 'v000000000002.ndjson', deadApp, options.events, 'd');
    options.progress(`bench webhooks: ${options.events} event(s) to a fast receiver${withDead ? ` and ${options.events} to one that never answers` : ''}`);

    const started = performance.now();
    const child = spawn(process.execPath, ['jobs/deliver.js', '--data-dir', dir], {
      cwd: ROOT,
      env: { ...process.env, DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1', DRIVING_WEBHOOK_POLL: '100ms' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let peakKb = 0;
    const sampler = setInterval(() => {
      peakKb = Math.max(peakKb, vmHwmKb(child.pid));
    }, 200);
    await fastReceiver.waitFor(options.events, 600_000, exited);
    const seconds = (performance.now() - started) / 1000;
    let dead = null;
    if (deadReceiver && deadApp) {
      await new Promise((r) => setTimeout(r, options.deadObserveMs));
      dead = { deadEvents: options.events, observedSeconds: (performance.now() - started) / 1000, deadRequestsReceived: deadReceiver.count() };
    }
    peakKb = Math.max(peakKb, vmHwmKb(child.pid));
    clearInterval(sampler);
    await deadReceiver?.close(); // resets the hanging requests, so the deliverer can stop
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`the deliverer exited with ${code}: ${stderr.slice(-500)}`);
    const fastResult = { events: options.events, seconds, perSecond: options.events / seconds, peakRssMb: peakKb / 1024 };
    if (dead && deadApp) {
      const outbox = await Outbox.open(paths.outboxFile, { readOnly: true });
      try {
        const [row] = await outbox.rows(`
          select count(*)::integer as attempts,
                 count(*) filter (where a.error like 'circuit_open%')::integer as short_circuited,
                 count(distinct a.seq)::integer as with_attempt
          from attempts as a join events as e using (seq)
          where e.app_id = $app`, { app: deadApp });
        return { fast: fastResult, dead: { ...dead, deadAttemptsRecorded: Number(row?.['attempts']), deadShortCircuited: Number(row?.['short_circuited']), deadWithAttempt: Number(row?.['with_attempt']) } };
      } finally {
        await outbox.close();
      }
    }
    return { fast: fastResult, dead: null };
  } finally {
    await fastReceiver.close();
    await deadReceiver?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function writeEventFile(dir: string, name: string, appId: string, count: number, prefix: string): void {
  mkdirSync(dir, { recursive: true });
  const createdAt = new Date().toISOString();
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(JSON.stringify({
      id: `evt_${prefix}${String(i).padStart(8, '0')}`, type: 'trip.created', createdAt, appId,
      data: { appId, orgUserId: `driver-${i % 1000}`, userId: 1_000_000 + (i % 1000), tripId: `trip-${prefix}-${i}`, status: 'normal', startTime: '2026-11-21 07:31:00', endTime: '2026-11-21 07:58:12' },
    }));
  }
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
}

/** A loopback receiver: answers 204 at once, or (`answers` false) never. */
async function receiver(answers: () => boolean) {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      for (const w of waiters) if (count >= w.n) w.resolve();
      if (answers()) res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    count: () => count,
    waitFor: (n: number, timeoutMs: number, exited: Promise<unknown>) =>
      new Promise<void>((resolve, reject) => {
        if (count >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${count} of ${n} deliveries in ${timeoutMs} ms`)), timeoutMs);
        void exited.then(() => reject(new Error(`the deliverer exited after ${count} of ${n} deliveries`)));
        waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
      }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Peak resident memory of a live process (Linux), in KiB; 0 when it cannot be read. */
export function vmHwmKb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}
