import { InputError } from '../errors.js';
import { positiveInt } from '../config.js';

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

export const INTERFACE_SCHEDULE = '1m,5m,20m,60m,6h,24h';

export function deliverySettings(env: NodeJS.ProcessEnv = process.env): DeliverySettings {
  return {
    timeoutMs: parseDuration(env['DRIVING_WEBHOOK_TIMEOUT'] || '10s', 'DRIVING_WEBHOOK_TIMEOUT'),
    scheduleMs: parseSchedule(env['DRIVING_WEBHOOK_SCHEDULE'] || INTERFACE_SCHEDULE),
    concurrency: atLeastOne(env['DRIVING_WEBHOOK_CONCURRENCY'], 32, 'DRIVING_WEBHOOK_CONCURRENCY'),
    perEndpoint: atLeastOne(env['DRIVING_WEBHOOK_PER_ENDPOINT'], 4, 'DRIVING_WEBHOOK_PER_ENDPOINT'),
    allowLoopback: ['1', 'true', 'yes'].includes((env['DRIVING_WEBHOOK_ALLOW_LOOPBACK'] ?? '').toLowerCase()),
    retentionDays: positiveInt(env['DRIVING_WEBHOOK_RETENTION_DAYS'], 30, 'DRIVING_WEBHOOK_RETENTION_DAYS'),
    breakerThreshold: atLeastOne(env['DRIVING_WEBHOOK_BREAKER_THRESHOLD'], 5, 'DRIVING_WEBHOOK_BREAKER_THRESHOLD'),
    breakerCooldownMs: parseDuration(env['DRIVING_WEBHOOK_BREAKER_COOLDOWN'] || '30s', 'DRIVING_WEBHOOK_BREAKER_COOLDOWN'),
    pollMs: parseDuration(env['DRIVING_WEBHOOK_POLL'] || '1s', 'DRIVING_WEBHOOK_POLL'),
    caFile: env['DRIVING_WEBHOOK_CA_FILE'] || null,
    disableAfterMs: parseDuration(env['DRIVING_WEBHOOK_DISABLE_AFTER'] || '5d', 'DRIVING_WEBHOOK_DISABLE_AFTER'),
  };
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** '250ms', '10s', '5m', '6h', '1d' → milliseconds. */
export function parseDuration(raw: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$/.exec(raw);
  if (!match) throw new InputError(`${name} must be a duration such as 500ms, 10s, 5m, 6h or 1d, got '${raw}'`);
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (!(ms > 0)) throw new InputError(`${name} must be more than 0, got '${raw}'`);
  return Math.round(ms);
}

/** The retry schedule: comma-separated durations, one per retry ('1m,5m,20m,60m,6h,24h'). */
export function parseSchedule(raw: string): number[] {
  const steps = raw.split(',').map((part) => parseDuration(part, 'DRIVING_WEBHOOK_SCHEDULE'));
  if (steps.length > 50) throw new InputError('DRIVING_WEBHOOK_SCHEDULE has more than 50 retries');
  return steps;
}

function atLeastOne(raw: string | undefined, fallback: number, name: string): number {
  const value = positiveInt(raw, fallback, name);
  if (value < 1) throw new InputError(`${name} must be at least 1, got '${raw}'`);
  return value;
}
