import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import underPressure from '@fastify/under-pressure';
import { ApiError } from './errors.js';
import { weightedRedisStore } from './weighted-redis-store.js';
import type { ApiLimits } from './limits.js';
import { costOf } from './cost.js';
import { WeightedStore, weightedKey } from './weighted-store.js';

const overloaded = (why: string): ApiError =>
  new ApiError('overloaded', `the service is overloaded (${why}); retry after the time in Retry-After`);

/** Whether the request sends a body: it is counted in the gate only once the body is in. */
const hasBody = (request: FastifyRequest): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

/**
 * Sheds load instead of queueing it: a request beyond `maxInFlight` being answered, or arriving
 * while the event loop lags more than `maxEventLoopDelayMs`, gets 503 at once with Retry-After.
 * A request with a body takes its place once the body has arrived (`preHandler`): a slow upload
 * holds a connection and its app's places (`capPerApp`), never the service's. Routes with
 * `config.shed: false` (health probes, which cost nothing) are always answered.
 */
export function shedLoad(app: FastifyInstance, limits: ApiLimits): void {
  let inFlight = 0;
  const enter = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (limits.maxInFlight > 0 && inFlight >= limits.maxInFlight) {
      reply.header('Retry-After', String(limits.overloadRetryAfterSeconds));
      throw overloaded('too many requests in progress');
    }
    inFlight += 1;
    // 'close' comes once the response is sent or the client is gone, whichever happens
    reply.raw.once('close', () => (inFlight -= 1));
  };
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.shed === false || hasBody(request)) return;
    await enter(request, reply);
  });
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.shed === false || !hasBody(request)) return;
    await enter(request, reply);
  });
  if (limits.maxEventLoopDelayMs > 0) {
    app.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      retryAfter: limits.overloadRetryAfterSeconds,
      pressureHandler: async (request: FastifyRequest, reply, type, value) => {
        // an interval without a single sample (the process was starting, or blocked through
        // all of it) reads as Infinity: the next interval measures the lag itself
        if (request.routeOptions.config.shed === false || (typeof value === 'number' && !Number.isFinite(value)))
          return;
        reply.header('Retry-After', String(limits.overloadRetryAfterSeconds));
        throw overloaded(type === 'eventLoopDelay' ? 'the event loop lags' : String(type));
      },
    });
  }
}

/** The app a credential acts for: an API key's app, a passport token's account's app. */
const appOf = (request: FastifyRequest): string | null => {
  const credential = request.credential;
  if (!credential) return null;
  return credential.kind === 'apiKey' ? request.tenant.appId : credential.owner.appId;
};

/**
 * At most `maxInFlightPerApp` requests of one app (its API keys and its drivers' passport tokens
 * together) are answered at once, from the moment the credential is read, body time included:
 * the next is a 429 at once. One app's slow uploads or long requests then wait on its own places.
 * Registered after `authenticate`, which resolves the credential.
 */
export function capPerApp(app: FastifyInstance, limits: ApiLimits): void {
  const inFlight = new Map<string, number>();
  app.addHook('onRequest', async (request, reply) => {
    if (limits.maxInFlightPerApp <= 0 || request.routeOptions.config.shed === false) return;
    const appId = appOf(request);
    if (appId === null) return;
    const held = inFlight.get(appId) ?? 0;
    if (held >= limits.maxInFlightPerApp) {
      reply.header('Retry-After', '1');
      throw new ApiError(
        'rate_limited',
        `this app has ${held} requests in progress, as many as it may have at once; retry after the time in Retry-After`,
      );
    }
    inFlight.set(appId, held + 1);
    reply.raw.once('close', () => {
      const left = (inFlight.get(appId) ?? 1) - 1;
      if (left > 0) inFlight.set(appId, left);
      else inFlight.delete(appId);
    });
  });
}

/** `60000` → `1 minute`, `1000` → `1 second`, `1500` → `1500 ms`. */
export function windowName(ms: number): string {
  for (const [unit, size] of [
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}

/**
 * Where the rate limits count: this process (default), a store the machine's workers share, or
 * Redis. Every one of them adds the request's cost (src/api/http/weighted-store.ts).
 */
export type RateCounting =
  | {
      redis: Redis;
      fallback?: FastifyRateLimitStoreCtor;
      log?: (line: string) => void;
      onMove?: (local: boolean) => void;
    }
  | { store: FastifyRateLimitStoreCtor }
  | null;

/** This process's counters: enough distinct keys that a flood of addresses does not evict the real clients' counts. */
class InProcessStore extends WeightedStore {
  constructor() {
    super({ cache: 100_000 });
  }
}

/**
 * Rate limits (@fastify/rate-limit, counted where `counting` says): per app in cost units when the
 * request carries a valid API key (each route's `config.cost`, src/api/http/cost.ts), per passport
 * token and per address (requests) otherwise, refused attempts included. 429 with Retry-After; the
 * message names the limit and its window. Routes with `config.rateLimit: false` are not counted.
 */
export function limitRates(app: FastifyInstance, limits: ApiLimits, counting: RateCounting = null): void {
  const isApp = (key: string): boolean => key.startsWith('app:');
  app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    store:
      counting && 'redis' in counting
        ? weightedRedisStore({ ...counting, fallback: counting.fallback ?? InProcessStore })
        : counting && 'store' in counting
          ? counting.store
          : InProcessStore,
    keyGenerator: (request) => {
      const credential = request.credential;
      if (credential?.kind === 'apiKey') return weightedKey(`app:${request.tenant.appId}`, costOf(request));
      return weightedKey(credential?.bucket ?? `address:${request.ip}`, 1);
    },
    timeWindow: (_request, key) => (isApp(key) ? limits.appRateWindowMs : limits.rateWindowMs),
    max: (_request, key) =>
      isApp(key) ? limits.ratePerApp : key.startsWith('token:') ? limits.ratePerToken : limits.ratePerAddress,
    errorResponseBuilder: (request, context) =>
      new ApiError(
        'rate_limited',
        request.credential?.kind === 'apiKey'
          ? `rate limit of ${context.max} cost units per ${windowName(limits.appRateWindowMs)} for this app reached (this request costs ${costOf(request)}); retry after the time in Retry-After`
          : `rate limit of ${context.max} requests per ${windowName(limits.rateWindowMs)} reached; retry after the time in Retry-After`,
      ),
  });
}
