import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import underPressure from '@fastify/under-pressure';
import { ApiError } from './errors.js';
import type { ApiLimits } from './limits.js';

const overloaded = (why: string): ApiError => new ApiError('overloaded', `the service is overloaded (${why}); retry after the time in Retry-After`);

/**
 * Sheds load instead of queueing it: a request beyond `maxInFlight` being answered, or arriving
 * while the event loop lags more than `maxEventLoopDelayMs`, gets 503 at once with Retry-After.
 * Routes with `config.shed: false` (health probes, which cost nothing) are always answered.
 */
export function shedLoad(app: FastifyInstance, limits: ApiLimits): void {
  let inFlight = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.shed === false) return;
    if (limits.maxInFlight > 0 && inFlight >= limits.maxInFlight) {
      reply.header('Retry-After', String(limits.overloadRetryAfterSeconds));
      throw overloaded('too many requests in progress');
    }
    inFlight += 1;
    // 'close' comes once the response is sent or the client is gone, whichever happens
    reply.raw.once('close', () => (inFlight -= 1));
  });
  if (limits.maxEventLoopDelayMs > 0) {
    app.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      retryAfter: limits.overloadRetryAfterSeconds,
      pressureHandler: async (request: FastifyRequest, reply, type, value) => {
        // an interval without a single sample (the process was starting, or blocked through
        // all of it) reads as Infinity: the next interval measures the lag itself
        if (request.routeOptions.config.shed === false || (typeof value === 'number' && !Number.isFinite(value))) return;
        reply.header('Retry-After', String(limits.overloadRetryAfterSeconds));
        throw overloaded(type === 'eventLoopDelay' ? 'the event loop lags' : String(type));
      },
    });
  }
}

/** Where the rate limits count: this process (default), a store the machine's workers share, or Redis. */
export type RateCounting = { redis: Redis } | { store: FastifyRateLimitStoreCtor } | null;

/**
 * Rate limits (@fastify/rate-limit, counted where `counting` says): per API key or passport token when
 * the request carries a valid one, else per address, refused attempts included. 429 with
 * Retry-After. Routes with `config.rateLimit: false` are not counted.
 */
export function limitRates(app: FastifyInstance, limits: ApiLimits, counting: RateCounting = null): void {
  app.register(rateLimit, {
    ...(counting ?? {}),
    global: true,
    hook: 'onRequest',
    timeWindow: limits.rateWindowMs,
    // enough distinct keys that a flood of addresses does not evict the real clients' counts
    cache: 100_000,
    keyGenerator: (request) => request.credential?.bucket ?? `address:${request.ip}`,
    max: (_request, key) => (key.startsWith('key:') ? limits.ratePerApiKey : key.startsWith('token:') ? limits.ratePerToken : limits.ratePerAddress),
    errorResponseBuilder: (_request, context) => new ApiError('rate_limited', `rate limit of ${context.max} requests per ${context.after} reached; retry after the time in Retry-After`),
  });
}
