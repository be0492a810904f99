import { SETTINGS, setting, type Env } from '../settings.js';

export { parseDuration } from '../setting-kinds.js';

/** How the deliverer behaves; the defaults are the interface's (10 s, 1m 5m 20m 60m 6h 24h). */
export interface DeliverySettings {
  /** An attempt fails when no complete answer arrived within this many milliseconds. */
  timeoutMs: number;
  /** Waits after the 1st, 2nd, … failed attempt; after the last one the event is dead-lettered. */
  scheduleMs: number[];
  /** Attempts in flight at once, over all endpoints. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint (URL), so a slow receiver holds up only itself. */
  perEndpoint: number;
  /** Plain http and loopback addresses, for local testing only. */
  allowLoopback: boolean;
  /** Delivered and dead events are forgotten this many days after they finished. */
  retentionDays: number;
  /** Consecutive unanswered attempts (timeouts, refused connections) that open an endpoint's breaker. */
  breakerThreshold: number;
  /** While a breaker is open, one probe attempt per this many milliseconds goes out for real. */
  breakerCooldownMs: number;
  /** How often the continuous deliverer looks for new event files and due attempts. */
  pollMs: number;
  /** Extra CA certificate (PEM file) to trust, for staging receivers with a private CA. */
  caFile: string | null;
  /** An endpoint that failed every attempt sent to it for this long is disabled (docs/decisions.md, Webhooks (delivery): 5 days). */
  disableAfterMs: number;
}

export const INTERFACE_SCHEDULE = SETTINGS.DRIVING_WEBHOOK_SCHEDULE.shown;

export function deliverySettings(env?: Env): DeliverySettings {
  return {
    timeoutMs: setting('DRIVING_WEBHOOK_TIMEOUT', env),
    scheduleMs: setting('DRIVING_WEBHOOK_SCHEDULE', env),
    concurrency: setting('DRIVING_WEBHOOK_CONCURRENCY', env),
    perEndpoint: setting('DRIVING_WEBHOOK_PER_ENDPOINT', env),
    allowLoopback: setting('DRIVING_WEBHOOK_ALLOW_LOOPBACK', env),
    retentionDays: setting('DRIVING_WEBHOOK_RETENTION_DAYS', env),
    breakerThreshold: setting('DRIVING_WEBHOOK_BREAKER_THRESHOLD', env),
    breakerCooldownMs: setting('DRIVING_WEBHOOK_BREAKER_COOLDOWN', env),
    pollMs: setting('DRIVING_WEBHOOK_POLL', env),
    caFile: setting('DRIVING_WEBHOOK_CA_FILE', env),
    disableAfterMs: setting('DRIVING_WEBHOOK_DISABLE_AFTER', env),
  };
}

/** The retry schedule: comma-separated durations, one per retry ('1m,5m,20m,60m,6h,24h'). */
export function parseSchedule(raw: string): number[] {
  return SETTINGS.DRIVING_WEBHOOK_SCHEDULE.parse(raw, 'DRIVING_WEBHOOK_SCHEDULE');
}
