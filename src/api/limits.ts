import { positiveInt } from '../config.js';
import { InputError } from '../errors.js';

/**
 * What one client may cost the API: connections, time, bytes and requests. Read once from the
 * environment at start (docs/api-limits.md lists every variable); tests pass their own.
 */
export interface ApiLimits {
  /** Open connections in all; the next one is closed at once (Node's server.maxConnections). */
  maxConnections: number;
  /** Open connections from one address; the next one from it is closed at once. */
  maxConnectionsPerAddress: number;
  /** Time to send the request line and headers (Node's headersTimeout); 408. */
  headersTimeoutMs: number;
  /** Time to send the whole request, body included (Node's requestTimeout); 408. */
  requestTimeoutMs: number;
  /** A connection with no traffic at all for this long is closed. 0: never. */
  idleTimeoutMs: number;
  /** A kept-alive connection waits this long for its next request. */
  keepAliveTimeoutMs: number;
  /** Request line and headers together (Node's maxHeaderSize); 431. */
  maxHeaderBytes: number;
  /** Body of every route but the SDK upload (none of them needs one); 413. */
  bodyLimitBytes: number;
  /** Body of the SDK upload (at most 500 records); 413. */
  sdkBodyLimitBytes: number;
  /** Nesting of arrays and objects in a JSON body; 400. */
  maxJsonDepth: number;
  /** The rate limits per passport token and per address count requests in windows of this length. */
  rateWindowMs: number;
  /** The rate limit per app counts cost units (src/api/cost.ts) in windows of this length. */
  appRateWindowMs: number;
  /** Cost units per app window with the app's API keys (the API-key operations), every key of the app together. */
  ratePerApp: number;
  /** Requests per window with one passport token (SDK upload). */
  ratePerToken: number;
  /** Requests per window from one address without a valid credential (refused ones included). */
  ratePerAddress: number;
  /** Requests being answered at once; beyond it a request is shed at once with 503. 0: no gate. */
  maxInFlight: number;
  /** Requests of one app being answered at once (body time included); beyond it 429. 0: no cap. */
  maxInFlightPerApp: number;
  /** Mean event-loop delay above which requests are shed with 503. 0: not checked. */
  maxEventLoopDelayMs: number;
  /** Retry-After of a 503 overloaded or busy, in seconds. */
  overloadRetryAfterSeconds: number;
  /** Distance evaluations one route's simplification may spend; beyond it 503 busy (src/api/route-work.ts). */
  routeWorkBudget: number;
  /** Distance evaluations of a route between two turns of the event loop. */
  routeWorkSlice: number;
  /** Routes worked on across turns of the event loop at once; the next such one is 503 busy. */
  routeWorkConcurrent: number;
}

const ZERO_SWITCHES_OFF = new Set<keyof ApiLimits>(['maxInFlight', 'maxInFlightPerApp', 'maxEventLoopDelayMs', 'overloadRetryAfterSeconds', 'idleTimeoutMs']);

export const DEFAULT_LIMITS: Readonly<ApiLimits> = {
  maxConnections: 4096,
  maxConnectionsPerAddress: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderBytes: 16_384,
  bodyLimitBytes: 16_384,
  sdkBodyLimitBytes: 8 * 1024 * 1024,
  maxJsonDepth: 32,
  rateWindowMs: 60_000,
  appRateWindowMs: 1_000,
  ratePerApp: 1_000,
  ratePerToken: 120,
  ratePerAddress: 1_200,
  maxInFlight: 512,
  maxInFlightPerApp: 32,
  maxEventLoopDelayMs: 1_000,
  overloadRetryAfterSeconds: 2,
  routeWorkBudget: 20_000_000,
  routeWorkSlice: 250_000,
  routeWorkConcurrent: 4,
};

/** The environment variable of each limit: DRIVING_API_ and the name in upper snake case. */
export const LIMIT_ENV: Readonly<Record<keyof ApiLimits, string>> = Object.fromEntries(
  Object.keys(DEFAULT_LIMITS).map((key) => [key, `DRIVING_API_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`]),
) as Record<keyof ApiLimits, string>;

/**
 * The limits from the environment, defaults where a variable is unset.
 * @example apiLimits({ DRIVING_API_RATE_PER_ADDRESS: '100' }).ratePerAddress // 100
 */
export function apiLimits(env: NodeJS.ProcessEnv = process.env, overrides: Partial<ApiLimits> = {}): ApiLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ApiLimits)[]) {
    limits[key] = positiveInt(env[LIMIT_ENV[key]], DEFAULT_LIMITS[key], LIMIT_ENV[key]);
  }
  // only the gates say what 0 means (off); anywhere else 0 would refuse every request
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ApiLimits)[]) {
    if (limits[key] === 0 && !ZERO_SWITCHES_OFF.has(key)) throw new InputError(`${LIMIT_ENV[key]} must be at least 1`);
  }
  return { ...limits, ...overrides };
}
