import type { FastifyInstance, FastifyRequest } from 'fastify';
import { refusal } from './client-error.js';
import { ERRORS } from './errors.js';
import type { ApiMetrics } from '../../metrics/api.js';

/** The ErrorResult's error name of a refused request, read from its body in `onSend` for `onResponse`. */
const failedWith = new WeakMap<FastifyRequest, string>();
const ERROR_NAME = /"error":"([a-z_]+)"/;

/** The error name of an ErrorResult body, if it is one of the known names (a bounded label). */
function errorName(payload: unknown): string | undefined {
  const name = typeof payload === 'string' ? ERROR_NAME.exec(payload)?.[1] : undefined;
  return name !== undefined && name in ERRORS ? name : undefined;
}

/**
 * Counts every answer in one place, whatever refused or answered it (guards, rate limits, routes,
 * Fastify itself): requests and latency by route template, status and app; requests in flight;
 * refusals (4xx, 503) by their ErrorResult name. What Node's parser refuses (408, 431, malformed)
 * never reaches Fastify and is counted from the server's `clientError` event. Registered before
 * the guards, so that a request they refuse is counted in flight too. Callback hooks: no promise
 * per request.
 */
export function observeHttp(app: FastifyInstance, metrics: ApiMetrics): void {
  app.addHook('onRequest', (_request, reply, done) => {
    metrics.inFlight.inc();
    // 'close' comes once the response is sent or the client is gone, whichever happens first
    reply.raw.once('close', () => metrics.inFlight.dec());
    done();
  });
  // every refusal, however it was made (a thrown ApiError, a handler's own reply, the 404
  // handler), is answered with an ErrorResult body whose `error` names the reason
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400) {
      const name = errorName(payload);
      if (name) failedWith.set(request, name);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const route = request.routeOptions.url ?? 'unmatched';
    const appId = request.tenant?.appId ?? 'none';
    metrics.requests.inc({ method: request.method, route, status: String(status), app: appId });
    metrics.duration.observe({ method: request.method, route, app: appId }, reply.elapsedTime / 1000);
    if ((status >= 400 && status < 500) || status === 503) {
      metrics.rejected.inc({ reason: failedWith.get(request) ?? `http_${status}`, status: String(status) });
    }
    done();
  });
  app.server.on('clientError', (error: NodeJS.ErrnoException) => {
    // a connection reset or broken pipe is answered with nothing: not a refusal
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return;
    const { name } = refusal(error);
    metrics.rejected.inc({ reason: name, status: String(ERRORS[name].status) });
  });
}
