import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { ApiContext } from './context.js';
import { ApiError, ERRORS } from './errors.js';
import { tripRoutes } from './routes/trips.js';
import { statisticsRoutes } from './routes/statistics.js';
import { safetyScoreRoutes } from './routes/safety-score.js';
import { passportRoutes } from './routes/passport.js';
import { sdkRoutes } from './routes/sdk.js';
import { openApiDocument, type RouteDoc } from './openapi.js';

export interface AppOptions {
  logger?: boolean;
}

/**
 * The HTTP layer: thin routes over the published snapshot and the passport store. Every /v1
 * operation needs `Authorization: Bearer <apiKey>`; every failure is an ErrorResult.
 */
export function buildApp(ctx: ApiContext, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ? { level: 'info' } : false,
    // one line per request, written below once the status is known; Fastify's own two lines
    // would log the URL before we could redact a token in it
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    // route parameters (org_user_id, trip_id, token) up to the schemas' limits, not Fastify's 100
    routerOptions: { maxParamLength: 1024 },
    // malformed URLs (bad percent-encoding) are answered in the ErrorResult shape too
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as unknown as FastifyReply;
      reply.header('X-Request-Id', request.id);
      return reply.status(400).send({ code: ERRORS.invalid_parameter.code, error: 'invalid_parameter', message: `url: ${error.message}`, requestId: request.id });
    },
    bodyLimit: 8 * 1024 * 1024,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
  });
  // operations 5 and DELETE take no body; clients that still send Content-Type: application/json
  // with an empty body must not get a 400
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ApiError('invalid_parameter', 'body: not valid JSON'), undefined);
    }
  });
  const routes: RouteDoc[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/v1/')) {
      routes.push({ method: String(route.method), url: route.url, schema: (route.schema ?? {}) as Record<string, unknown>, auth: route.config?.auth ?? 'apiKey' });
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    // decided by the matched route's own declaration, never by the raw URL, and API key by default;
    // an unmatched URL goes on to the 404 handler
    if (request.routeOptions.url === undefined || (request.routeOptions.config.auth ?? 'apiKey') !== 'apiKey') return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const tenant = match ? ctx.apps.byApiKey(match[1] as string) : null;
    if (!tenant) throw new ApiError('unauthorized', 'Authorization: expected "Bearer <apiKey>" with a valid API key');
    request.tenant = tenant;
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({
      // the route pattern, not the URL: a token in the path never reaches the log
      requestId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10, appId: request.tenant?.appId,
    }, 'request');
  });
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const body = (name: keyof typeof ERRORS, message: string) => ({ code: ERRORS[name].code, error: name, message, requestId: request.id });
    if (error instanceof ApiError) return reply.status(error.status).send(body(error.error, error.message));
    if (error.validation) return reply.status(400).send(body('invalid_parameter', validationMessage(error)));
    if (error.statusCode === 413) return reply.status(413).send(body('payload_too_large', 'body: too large'));
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return reply.status(400).send(body('invalid_parameter', `request: ${error.message}`));
    request.log.error({ err: error }, 'internal error');
    return reply.status(500).send(body('internal_error', 'internal error; quote the requestId when reporting it'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ code: ERRORS.route_not_found.code, error: 'route_not_found', message: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`, requestId: request.id }),
  );

  app.get('/healthz', { config: { auth: 'none' } }, async () => ({ status: 'ok' }));
  // unauthenticated: a status, the served slot and version, how operations 1-4 are answered and
  // coarse states, with a stable reason code; paths, sizes and error texts go to the log only
  app.get('/readyz', { config: { auth: 'none' } }, async (_request, reply) => {
    const manifest = ctx.snapshots.manifest;
    const failed = ctx.snapshots.lastError !== null;
    if (!manifest) return reply.status(503).send({ status: 'not_ready', reason: failed ? 'snapshot_open_failed' : 'nothing_published' });
    const serving = ctx.snapshots.serving;
    const reason = failed ? 'snapshot_open_failed' : ctx.snapshots.manifestMissing ? 'manifest_missing' : serving?.refusal ?? null;
    return {
      status: failed ? 'stale' : 'ready',
      snapshot: `${manifest.slot}@${manifest.version}`,
      slot: manifest.slot,
      version: manifest.version,
      serving: serving?.mode ?? 'sql',
      // the serving pack read into the page cache: until 'warm', some answers wait for the disk
      pageCache: ctx.snapshots.pageCache?.state ?? 'off',
      ...(reason ? { reason } : {}),
    };
  });
  tripRoutes(app, ctx);
  statisticsRoutes(app, ctx);
  safetyScoreRoutes(app, ctx);
  passportRoutes(app, ctx);
  sdkRoutes(app, ctx);
  app.get('/v1/openapi.json', { config: { auth: 'none' } }, async () => openApiDocument(routes));
  return app;
}

/** Names the parameter that failed: `limit: must be <= 100`. */
function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const missing = (first.params as { missingProperty?: string; additionalProperty?: string } | undefined);
  const name = missing?.missingProperty ?? missing?.additionalProperty ?? first.instancePath.replace(/^\//, '') ?? error.validationContext;
  const what = missing?.additionalProperty ? 'is not a parameter of this operation' : first.message ?? 'is invalid';
  return `${name || error.validationContext}: ${what}`;
}
