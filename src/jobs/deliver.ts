import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { silent, type Progress } from '../progress.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Deliverer, emptyCounters, type DeliveryCounters } from '../webhooks/deliverer.js';
import { Lease } from '../webhooks/lease.js';
import { openState } from '../state/open.js';
import { DatabaseBusyError } from '../db/open.js';
import { openOutbox, outboxUrl } from '../webhooks/open-outbox.js';
import type { OutboxStore } from '../webhooks/outbox-store.js';
import { intakeEventFiles } from '../webhooks/intake.js';
import { intakeWhileStandingBy } from '../webhooks/standby-intake.js';
import { listenControl } from '../webhooks/control.js';
import { operate } from '../webhooks/operations.js';
import { deliverySettings, type DeliverySettings } from '../webhooks/delivery-settings.js';
import type { Registry } from 'prom-client';
import { delivererMetrics } from '../metrics/deliverer.js';
import { setting, type Env } from '../settings.js';

export interface DeliverOptions {
  dataDir: string;
  /** Deliver what is due now and exit (cron); otherwise run until `stop` resolves. */
  once: boolean;
  stop?: Promise<void>;
  settings?: Partial<DeliverySettings>;
  clock?: () => Date;
  progress?: Progress;
  /** How often the continuous deliverer reports what it did (ms). */
  reportEveryMs?: number;
  /** The registry the deliverer's series are kept in while the outbox is open (src/metrics/deliverer.ts). */
  metrics?: Registry;
  /** How long the deliverer's lease lasts unless renewed (default DRIVING_WEBHOOK_LEASE_MS, else 20 s). */
  leaseMs?: number;
}

/** The lease one deliverer holds in the shared state store. */
export const DELIVERER_LEASE = 'webhook-deliverer';

/** DRIVING_WEBHOOK_LEASE_MS, else 20 s: a standby takes over within that (plus a quarter) of a holder's death. */
export function leaseMs(env?: Env): number {
  return setting('DRIVING_WEBHOOK_LEASE_MS', env);
}

export interface DeliverResult extends DeliveryCounters {
  seconds: number;
}

/** `jobs/deliver.js`: owns the outbox; takes event files in and delivers them. */
export async function runDeliver(options: DeliverOptions): Promise<DeliverResult> {
  const started = performance.now();
  const paths = pathsFor(options.dataDir);
  const settings = { ...deliverySettings(), ...options.settings };
  const progress = options.progress ?? silent;
  const clock = options.clock ?? (() => new Date());
  // one deliverer at a time over the shared state (docs/decisions.md, Storage and processes): the others stand by, and one of
  // them takes over once the holder's lease runs out; --once does its run only when it is free
  const state = await openState({ dataDir: options.dataDir });
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseOptions = { ttlMs: options.leaseMs ?? leaseMs(), log: progress };
  const stopped = options.stop ?? new Promise<void>(() => undefined);
  // With a database URL the outbox is PostgreSQL's, shared by every machine: it is opened before the
  // lease, and while another deliverer holds the lease this one takes its own machine's event files
  // in (the job machine writes them), so the holder, wherever it runs, has them to deliver.
  const shared = outboxUrl() ? await openOutbox(options.dataDir) : null;
  let lease: Lease | null;
  try {
    if (options.once) {
      if (shared) await intakeEventFiles(shared, paths.eventsDir, clock(), new Map(), progress);
      lease = await Lease.tryTake(state, DELIVERER_LEASE, holder, leaseOptions);
    } else {
      const standby = shared ? intakeWhileStandingBy(shared, paths.eventsDir, settings.pollMs, clock, progress) : null;
      try {
        lease = await Lease.waitFor(state, DELIVERER_LEASE, holder, leaseOptions, stopped);
      } finally {
        await standby?.stop();
      }
    }
  } catch (error) {
    await shared?.close();
    throw error;
  }
  if (!lease) {
    await shared?.close();
    if (options.once)
      throw new DatabaseBusyError(
        DELIVERER_LEASE,
        'another deliverer holds the lease',
        'it delivers what is due; run again when it has stopped',
      );
    return { ...emptyCounters(), seconds: (performance.now() - started) / 1000 };
  }
  if (!options.once) progress(`deliver: holding the ${DELIVERER_LEASE} lease as ${holder}`);
  let lost: () => void = () => undefined;
  const leaseLost = new Promise<void>((resolve) => (lost = resolve));
  lease.keep(lost);
  const stop = Promise.race([stopped, leaseLost]);
  const held = lease;
  // the DuckDB outbox has one writer; a holder that died a moment ago has let go of it
  const outbox: OutboxStore =
    shared ??
    (await openOutbox(options.dataDir, { lockWaitMs: 10_000, databaseUrl: null }).catch(async (error: unknown) => {
      await held.release();
      throw error;
    }));
  const deliverer = new Deliverer(outbox, paths, settings, clock, progress);
  // the operator CLI reaches the outbox through this socket while the deliverer holds it (the
  // folder is the DuckDB outbox's; with PostgreSQL's nothing else has made it)
  mkdirSync(dirname(paths.delivererSocket), { recursive: true, mode: 0o700 });
  const control = await listenControl(paths.delivererSocket, (request) =>
    operate(outbox, request, clock(), deliverer.state()),
  );
  const unmeasure = options.metrics ? delivererMetrics(options.metrics, deliverer, clock) : () => undefined;
  let counters: DeliveryCounters;
  try {
    if (options.once) {
      progress('deliver: delivering what is due now');
      counters = await deliverer.runOnce(stop);
    } else {
      progress(`deliver: running (control socket ${paths.delivererSocket}); ${describeSettings(settings)}`);
      const report = setInterval(
        () => progress(`deliver: ${describeCounters(deliverer.counters)}`),
        options.reportEveryMs ?? 10_000,
      );
      try {
        counters = await deliverer.runUntil(stop);
      } finally {
        clearInterval(report);
      }
    }
  } finally {
    unmeasure();
    await new Promise((resolve) => control.close(resolve));
    await deliverer.close();
    await outbox.close();
    await lease.release();
  }
  return { ...counters, seconds: (performance.now() - started) / 1000 };
}

export function describeCounters(c: DeliveryCounters): string {
  return (
    `${c.intake.events} event(s) taken in from ${c.intake.files} file(s)` +
    `${c.intake.rejected > 0 ? ` (${c.intake.rejected} line(s) rejected)` : ''}` +
    `${c.intake.failedFiles > 0 ? `, ${c.intake.failedFiles} unreadable file(s) set aside in events/failed` : ''}; ${c.attempts} attempt(s): ` +
    `${c.delivered} delivered, ${c.retried} to retry, ${c.dead} dead-lettered` +
    `${c.shortCircuited > 0 ? `, ${c.shortCircuited} not sent (breaker open)` : ''}` +
    `${c.replayed + c.replayFailed > 0 ? `; replays: ${c.replayed} delivered, ${c.replayFailed} failed` : ''}` +
    describeFailures(c.failures)
  );
}

/** Why attempts failed, most frequent first: `; failed: 2142 blocked: plain http is ...`. */
function describeFailures(failures: Record<string, number> | undefined): string {
  const entries = Object.entries(failures ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return '';
  const shown = entries
    .slice(0, 5)
    .map(([reason, n]) => `${n} ${reason}${reason.includes('loopback') ? ' (or --allow-loopback)' : ''}`);
  return `; failed: ${shown.join('; ')}${entries.length > 5 ? `; ${entries.length - 5} other reason(s)` : ''}`;
}

function describeSettings(s: DeliverySettings): string {
  const schedule = s.scheduleMs
    .map((ms) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms}ms`))
    .join(',');
  return `timeout ${s.timeoutMs} ms, retries ${schedule}, ${s.concurrency} at once (${s.perEndpoint} per endpoint)${s.allowLoopback ? ', loopback allowed' : ''}`;
}
