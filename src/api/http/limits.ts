import { SETTINGS, setting, type Env, type SettingName } from '../../settings.js';

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
  /** The rate limit per app counts cost units (src/api/http/cost.ts) in windows of this length. */
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
  /** Retry-After of a 503 storage_full (the data folder's disk is full: src/api/http/storage-full.ts), in seconds. */
  storageRetryAfterSeconds: number;
  /** Distance evaluations one route's simplification may spend; beyond it 503 busy (src/api/geometry/route-work.ts). */
  routeWorkBudget: number;
  /** Distance evaluations of a route between two turns of the event loop. */
  routeWorkSlice: number;
  /** Routes worked on across turns of the event loop at once; the next such one is 503 busy. */
  routeWorkConcurrent: number;
}

const KEYS = [
  'maxConnections',
  'maxConnectionsPerAddress',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'idleTimeoutMs',
  'keepAliveTimeoutMs',
  'maxHeaderBytes',
  'bodyLimitBytes',
  'sdkBodyLimitBytes',
  'maxJsonDepth',
  'rateWindowMs',
  'appRateWindowMs',
  'ratePerApp',
  'ratePerToken',
  'ratePerAddress',
  'maxInFlight',
  'maxInFlightPerApp',
  'maxEventLoopDelayMs',
  'overloadRetryAfterSeconds',
  'storageRetryAfterSeconds',
  'routeWorkBudget',
  'routeWorkSlice',
  'routeWorkConcurrent',
] as const satisfies readonly (keyof ApiLimits)[];

/** The environment variable of each limit: DRIVING_API_ and the name in upper snake case (src/settings.ts declares each). */
export const LIMIT_ENV: Readonly<Record<keyof ApiLimits, SettingName>> = Object.fromEntries(
  KEYS.map((key) => [key, `DRIVING_API_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`]),
) as Record<keyof ApiLimits, SettingName>;

/** The limits' defaults, from src/settings.ts; a 0 there is allowed only where it switches a gate off. */
export const DEFAULT_LIMITS: Readonly<ApiLimits> = Object.fromEntries(
  KEYS.map((key) => [key, SETTINGS[LIMIT_ENV[key]].fallback]),
) as unknown as ApiLimits;

/**
 * The limits from the environment, defaults where a variable is unset.
 * @example apiLimits({ DRIVING_API_RATE_PER_ADDRESS: '100' }).ratePerAddress // 100
 */
export function apiLimits(env?: Env, overrides: Partial<ApiLimits> = {}): ApiLimits {
  const limits = Object.fromEntries(KEYS.map((key) => [key, setting(LIMIT_ENV[key], env)])) as unknown as ApiLimits;
  return { ...limits, ...overrides };
}
