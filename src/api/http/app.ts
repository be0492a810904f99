import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifySchema,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import { CellNotServed, type ApiContext } from './context.js';
import { forwardToCell, mayForward } from './cell-forward.js';
import { ApiError, ERRORS } from './errors.js';
import { tripRoutes } from '../routes/trips.js';
import { statisticsRoutes } from '../routes/statistics.js';
import { safetyScoreRoutes } from '../routes/safety-score.js';
import { passportRoutes } from '../routes/passport.js';
import { sdkRoutes } from '../routes/sdk.js';
import { tripRouteEndpoint } from '../routes/trip-route.js';
import { docsRoutes } from '../routes/docs.js';
import { webhookRoutes } from '../routes/webhooks.js';
import { exportRoutes } from '../routes/exports.js';
import swagger from '@fastify/swagger';
import { documentBase, operationSchema, finished } from '../openapi/openapi.js';
import { parseJsonBody } from './json-body.js';
import { answerClientError } from './client-error.js';
import { boundConnections } from './connections.js';
import { authenticate } from './auth.js';
import { capPerApp, limitRates, shedLoad } from './guards.js';
import { strictNumbers } from './strict-query.js';
import { enumMessage } from './enum-message.js';
import type { ApiMetrics } from '../../metrics/api.js';
import { observeHttp } from './http-metrics.js';
import { followReadiness, notFollowedYet } from './follow-readiness.js';
import { LandingCounter } from '../../landing-status.js';
import { storageFull } from './storage-full.js';
import { storeUnavailable } from './store-down.js';
import { diskSpace } from '../../disk-space.js';
import { loggerOptions } from './log.js';

/** An unread body up to this size is drained after an error answer rather than the connection closed. */
const DRAIN_BYTES = 64 * 1024;

export interface AppOptions {
  /** The request log (one JSON line a request on stdout). */
  logger?: boolean;
  /** Count requests, latency and refusals (src/api/http/http-metrics.ts). */
  metrics?: ApiMetrics;
}

/**
 * The HTTP layer: thin routes over the published snapshot and the passport store. Every /v1
 * operation needs `Authorization: Bearer <apiKey>`; every failure is an ErrorResult. What one
 * client can cost is bounded by `ctx.limits` (docs/api-limits.md).
 */
export function buildApp(ctx: ApiContext, options: AppOptions = {}): FastifyInstance {
  const limits = ctx.limits;
  const app = Fastify({
    // the request log on stdout when asked for, the API's own lines on stderr (./log.ts)
    logger: loggerOptions(options.logger ?? false),
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
      return reply.status(400).send({
        code: ERRORS.invalid_parameter.code,
        error: 'invalid_parameter',
        message: `url: ${error.message}`,
        requestId: request.id,
      });
    },
    // only the SDK upload takes a body; its route sets its own limit
    bodyLimit: limits.bodyLimitBytes,
    http: {
      maxHeaderSize: limits.maxHeaderBytes,
      // how often Node checks the header and request timeouts (its default, 30 s, is longer than they are)
      connectionsCheckingInterval: Math.max(
        100,
        Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
      ),
    },
    // what Node's parser refuses never reaches a route: answered as an ErrorResult there
    clientErrorHandler: answerClientError,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
  });
  boundConnections(app.server, limits);
  if (options.metrics) observeHttp(app, options.metrics);
  // the token issue and DELETE take no body; clients that still send Content-Type: application/json
  // with an empty body must not get a 400. A body nested too deep is refused before it is parsed.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string, limits.maxJsonDepth));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // the OpenAPI document from the routes' schemas as registered, with what they cannot say added
  // by the transform (src/api/openapi/openapi.ts)
  app.register(swagger, {
    openapi: documentBase(),
    // OpenAPI 3.1 takes JSON Schema's const as it is
    convertConstToEnum: false,
    transform: ({ schema, url, route }) => ({
      url,
      schema: operationSchema({
        method: String(route.method),
        url,
        schema: (schema ?? {}) as Record<string, unknown>,
        auth: route.config?.auth ?? 'apiKey',
      }) as FastifySchema,
    }),
    transformObject: (built) => ('openapiObject' in built ? finished(built.openapiObject) : built.swaggerObject),
  });
  // in this order: shed, resolve the credential, count it (the rate limit's own per-route hook),
  // then refuse an unauthenticated request before its body is read (preParsing)
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  shedLoad(app, limits);
  authenticate(app, ctx);
  capPerApp(app, limits);
  limitRates(app, limits, ctx.rateCounting ?? null);
  strictNumbers(app);
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        // the route pattern, not the URL: a token in the path never reaches the log
        requestId: request.id,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        appId: request.tenant?.appId,
      },
      'request',
    );
  });
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const body = (name: keyof typeof ERRORS, message: string) => ({
      code: ERRORS[name].code,
      error: name,
      message,
      requestId: request.id,
    });
    // a large body left unread (refused before it was read, or too large) is not drained: the
    // connection closes after the answer; a small rest is read and dropped, keeping the connection
    if (!request.raw.complete && !(Number(request.headers['content-length']) <= DRAIN_BYTES))
      reply.header('Connection', 'close');
    // a driver of a cell another machine serves: sent on through the balancer (cell-forward.ts)
    if (error instanceof CellNotServed && ctx.cellRouter && mayForward(request))
      return forwardToCell(request, reply, ctx.cellRouter, error.cell).catch((failed: unknown) => {
        request.log.error({ err: failed }, 'cell router');
        return reply.status(error.status).send(body(error.error, error.message));
      });
    if (error instanceof ApiError)
      return reply.status(error.status).headers(error.headers).send(body(error.error, error.message));
    if (error.validation) return reply.status(400).send(body('invalid_parameter', validationMessage(error)));
    if (error.statusCode === 413)
      return reply
        .status(413)
        .send(
          body(
            'payload_too_large',
            `body: larger than the ${reply.request.routeOptions.bodyLimit ?? limits.bodyLimitBytes} bytes this operation takes`,
          ),
        );
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return reply.status(400).send(body('invalid_parameter', `request: ${error.message}`));
    // a disk with no room is an outage that heals, never an internal error: nothing was stored
    const full = storageFull(error, limits.storageRetryAfterSeconds);
    if (full) {
      request.log.error({ err: error }, 'storage full');
      return reply.status(full.status).headers(full.headers).send(body(full.error, full.message));
    }
    // the shared store (PostgreSQL) not answering is an outage that heals too (store-down.ts)
    const down = storeUnavailable(error, limits.storageRetryAfterSeconds);
    if (down) {
      request.log.error({ err: error }, 'shared store unavailable');
      return reply.status(down.status).headers(down.headers).send(body(down.error, down.message));
    }
    request.log.error({ err: error }, 'internal error');
    return reply.status(500).send(body('internal_error', 'internal error; quote the requestId when reporting it'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      code: ERRORS.route_not_found.code,
      error: 'route_not_found',
      message: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
      requestId: request.id,
    }),
  );

  // registered once the guard plugins have loaded, so that their hooks reach every route
  // biome-ignore lint/nursery/noMisusedPromises: Fastify awaits a plugin that returns a promise
  app.register(async (routes) => {
    // health probes cost nothing and must not flap under load: never shed, never rate limited
    const probe = { auth: 'none', shed: false, rateLimit: false } as const;
    routes.get('/healthz', { config: probe }, async () => ({ status: 'ok' }));
    // unauthenticated: a status, the served slot and version, how the trip list, detail, statistics and score are answered and
    // coarse states, with a stable reason code; paths, sizes and error texts go to the log only
    const landingCounter = ctx.landing ?? new LandingCounter(ctx.landingDir);
    routes.get('/readyz', { config: probe }, async (_request, reply) => {
      // with cells, every cell served must have a snapshot before the machine takes requests
      const cells = ctx.cells ? [...ctx.cells.byName.entries()].sort(([a], [b]) => (a < b ? -1 : 1)) : [];
      const cellsWithout = cells.filter(([, c]) => !c.snapshots.manifest).map(([name]) => name);
      if (cells.length > 0 && cellsWithout.length > 0 && cellsWithout.length < cells.length)
        return reply.status(503).send({
          status: 'not_ready',
          reason: ctx.follow || cells.length > 1 ? 'no_snapshot_copied' : 'nothing_published',
          detail: `no snapshot yet of cell(s) ${cellsWithout.join(', ')}`,
        });
      const manifest = ctx.snapshots.manifest;
      const failed = ctx.snapshots.lastError !== null;
      const damaged = ctx.snapshots.damaged.list();
      // an API machine says what it follows and how far behind it is (src/api/http/follow-readiness.ts)
      const follow = ctx.follow ? followReadiness(ctx.follow, manifest?.version ?? null, ctx.now()) : null;
      if (!manifest)
        return reply.status(503).send({
          status: 'not_ready',
          reason: failed ? 'snapshot_open_failed' : ctx.follow ? 'no_snapshot_copied' : 'nothing_published',
          ...(ctx.follow && !failed ? { detail: notFollowedYet(ctx.follow) } : {}),
          ...(damaged.length > 0 ? { damaged } : {}),
          ...(follow ? { follow } : {}),
        });
      const serving = ctx.snapshots.serving;
      const reason = failed
        ? 'snapshot_open_failed'
        : ctx.snapshots.manifestMissing
          ? 'manifest_missing'
          : (serving?.refusal ?? (damaged.length > 0 ? 'file_damaged' : follow?.failing ? 'follow_failing' : null));
      return {
        status: failed ? 'stale' : 'ready',
        snapshot: `${manifest.slot}@${manifest.version}`,
        slot: manifest.slot,
        version: manifest.version,
        serving: serving?.mode ?? 'sql',
        // the serving pack read into the page cache: until 'warm', some answers wait for the disk
        pageCache: ctx.snapshots.pageCache?.state ?? 'off',
        ...(reason ? { reason } : {}),
        // published files found damaged (relative to published/): their requests get 503 data_unavailable
        ...(damaged.length > 0 ? { damaged } : {}),
        // input files waiting for the load, and files it set aside (landing/failed/): counts only
        landing: landingSummary(landingCounter),
        // the disk uploads are written to: `nearly_full` under 5% free, `full` without room for one
        // upload (uploads get 503 storage_full); still ready, as reads are served (docs/decisions.md)
        ...diskState(ctx.landingDir, limits.sdkBodyLimitBytes),
        ...(follow ? { follow } : {}),
        // each cell served, and the publish of it served
        ...(cells.length > 0
          ? {
              cells: Object.fromEntries(
                cells.map(([name, c]) => [name, `${c.snapshots.manifest?.slot}@${c.snapshots.manifest?.version}`]),
              ),
            }
          : {}),
      };
    });
    tripRoutes(routes, ctx);
    tripRouteEndpoint(routes, ctx);
    statisticsRoutes(routes, ctx);
    safetyScoreRoutes(routes, ctx);
    passportRoutes(routes, ctx);
    sdkRoutes(routes, ctx);
    webhookRoutes(routes, ctx);
    exportRoutes(routes, ctx);
    routes.get('/v1/openapi.json', { config: { auth: 'none' } }, async () => app.swagger());
    docsRoutes(routes);
  });
  return app;
}

function diskState(landingDir: string, uploadBytes: number): { disk?: 'ok' | 'nearly_full' | 'full' } {
  const space = diskSpace(landingDir, uploadBytes);
  return space ? { disk: space.state } : {};
}

function landingSummary(counter: LandingCounter): {
  waiting: number;
  oldestWaitingSeconds: number | null;
  failed: number;
  refused: number;
} {
  const { waiting, oldestWaitingSeconds, failed, refused } = counter.read();
  return {
    waiting,
    oldestWaitingSeconds: oldestWaitingSeconds === null ? null : Math.round(oldestWaitingSeconds),
    failed,
    refused,
  };
}

/** Names the parameter that failed: `limit: must be <= 100`. */
function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const missing = first.params as { missingProperty?: string; additionalProperty?: string } | undefined;
  const name =
    missing?.missingProperty ??
    missing?.additionalProperty ??
    first.instancePath.replace(/^\//, '') ??
    error.validationContext;
  const allowed =
    first.keyword === 'enum' ? (first.params as { allowedValues?: unknown[] } | undefined)?.allowedValues : undefined;
  const what = missing?.additionalProperty
    ? 'is not a parameter of this operation'
    : allowed
      ? enumMessage(allowed)
      : (first.message ?? 'is invalid');
  return `${name || error.validationContext}: ${what}`;
}
