import { Counter, Gauge, type Registry } from 'prom-client';
import type { Row } from '../db/sql.js';
import type { DeliveryCounters } from '../webhooks/deliverer.js';

/** What the deliverer's series are read from at scrape time. */
export interface DelivererSource {
  /** This process's counts since it started (src/webhooks/deliverer.ts). */
  counters: DeliveryCounters;
  state(): { inFlight: number; openEndpoints: unknown[] };
  /** Apps with a webhook URL: only their events can be attempted. */
  appsWithWebhook(): Promise<Map<string, unknown>>;
  /** The outbox per app and status (sql/ops/webhooks/counts.sql). */
  outbox: { counts(now: Date): Promise<Row[]> };
}

/** deliveries_total's `result` label: each outcome of an attempt the counters keep. */
const RESULTS = {
  delivered: 'delivered',
  retried: 'retried',
  dead: 'dead_lettered',
  shortCircuited: 'short_circuited',
  replayed: 'replay_delivered',
  replayFailed: 'replay_failed',
} as const;

/**
 * The deliverer's series (docs/operating.md). The outbox's state (depth, oldest pending, dead
 * letters) is read from the outbox itself at scrape time, so it survives restarts and agrees with
 * `webhooks.js counts`; the counters are this process's since it started (Prometheus' rate() and
 * increase() take the reset at a restart in their stride). Returns a function that removes them,
 * for when the outbox is closed.
 */
export function delivererMetrics(
  registry: Registry,
  source: DelivererSource,
  now: () => Date = () => new Date(),
): () => void {
  const registers = [registry];
  // one read of the outbox per scrape, shared by the gauges below
  let counts: Promise<Row[]> | null = null;
  const outboxRows = (): Promise<Row[]> =>
    (counts ??= source.outbox.counts(now()).finally(() => setImmediate(() => (counts = null))));
  const perApp = (rows: Row[], status: string, value: (r: Row) => number) =>
    rows.filter((r) => r['status'] === status).map((r) => ({ app: String(r['app_id']), value: value(r) }));
  const fromRows = (gauge: Gauge<'app'>, entries: { app: string; value: number }[]) => {
    gauge.reset();
    for (const e of entries) gauge.set({ app: e.app }, e.value);
  };
  const metrics = [
    new Gauge({
      name: 'driving_webhook_outbox_pending_events',
      help: 'Events in the outbox not yet delivered nor dead-lettered (the outbox depth), by app',
      labelNames: ['app'],
      registers,
      async collect() {
        fromRows(
          this,
          perApp(await outboxRows(), 'pending', (r) => Number(r['events'])),
        );
      },
    }),
    new Gauge({
      name: 'driving_webhook_outbox_due_events',
      help: 'Pending events whose next attempt is due now, of apps with a webhook URL, by app (they stay high while delivery is stuck)',
      labelNames: ['app'],
      registers,
      async collect() {
        // an app without a URL keeps its events pending and never attempts them: not stuck, unaddressed
        const addressed = await source.appsWithWebhook();
        fromRows(
          this,
          perApp(await outboxRows(), 'pending', (r) => Number(r['due_now'])).filter((e) => addressed.has(e.app)),
        );
      },
    }),
    new Gauge({
      name: 'driving_webhook_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending event, by app (absent when none is pending)',
      labelNames: ['app'],
      registers,
      async collect() {
        const at = now().getTime();
        fromRows(
          this,
          perApp(await outboxRows(), 'pending', (r) =>
            Math.max(0, (at - Number(r['oldest_pending_ms'])) / 1000),
          ).filter((e) => Number.isFinite(e.value)),
        );
      },
    }),
    new Gauge({
      name: 'driving_webhook_dead_letters',
      help: 'Dead-lettered events kept in the outbox (status failed), by app',
      labelNames: ['app'],
      registers,
      async collect() {
        fromRows(
          this,
          perApp(await outboxRows(), 'failed', (r) => Number(r['events'])),
        );
      },
    }),
    new Gauge({
      name: 'driving_webhook_attempts_in_flight',
      help: 'Attempts taken from the outbox and not yet recorded',
      registers,
      collect() {
        this.set(source.state().inFlight);
      },
    }),
    new Gauge({
      name: 'driving_webhook_open_breakers',
      help: 'Endpoints whose circuit breaker is open (attempts to them fail at once)',
      registers,
      collect() {
        this.set(source.state().openEndpoints.length);
      },
    }),
    new Counter({
      name: 'driving_webhook_attempts_total',
      help: 'Delivery attempts made by this process (scheduled and replays)',
      registers,
      collect() {
        setCounter(this, [[{}, source.counters.attempts]]);
      },
    }),
    new Counter({
      name: 'driving_webhook_deliveries_total',
      help: 'Outcomes of the attempts recorded by this process, by result',
      labelNames: ['result'],
      registers,
      collect() {
        setCounter(
          this,
          Object.entries(RESULTS).map(([key, result]) => [{ result }, source.counters[key as keyof typeof RESULTS]]),
        );
      },
    }),
    new Counter({
      name: 'driving_webhook_intake_events_total',
      help: "Events taken into the outbox from the jobs' event files by this process",
      registers,
      collect() {
        setCounter(this, [[{}, source.counters.intake.events]]);
      },
    }),
    new Counter({
      name: 'driving_webhook_intake_rejected_lines_total',
      help: 'Lines of event files that could not be taken in (kept in intake_rejects)',
      registers,
      collect() {
        setCounter(this, [[{}, source.counters.intake.rejected]]);
      },
    }),
  ];
  return () => {
    for (const m of metrics) registry.removeSingleMetric((m as unknown as { name: string }).name);
  };
}

/** A counter kept elsewhere as a plain number, handed to prom-client at scrape time. */
function setCounter<L extends string>(counter: Counter<L>, values: [Partial<Record<L, string>>, number][]): void {
  counter.reset();
  for (const [labels, value] of values) counter.inc(labels, value);
}
