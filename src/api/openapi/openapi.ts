import { OPERATIONS, TAGS } from './openapi-docs.js';
import { invalidParameterExample, invalidParameterMessage } from './openapi-error-example.js';
import { tripRecordComponents } from '../upload/trip-record-schema.js';

/** A route as registered, as the document's transform sees it. */
export interface RouteDoc {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  auth: 'apiKey' | 'passportToken' | 'none';
}

type Schema = { properties?: Record<string, Record<string, unknown>>; required?: string[] } | undefined;

const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: "invalid_parameter: the message starts with the parameter's name and says why",
  401: 'unauthorized: no valid API key (or passport token, for the SDK upload)',
  404: 'user_not_found, trip_not_found, score_not_available, token_not_found, route_not_found, endpoint_not_found or event_not_found',
  413: 'payload_too_large: the body is over the limit',
  415: 'unsupported_media_type: a Content-Encoding other than gzip, or a charset other than UTF-8; the message names it',
  429: 'rate_limited: too many requests; wait as Retry-After says',
  500: 'internal_error: never with internals; quote the requestId',
  503: 'not_ready (nothing published yet), storage_unavailable (nothing changed; retry), storage_full (a write the disk had no room for: nothing was stored; retry), overloaded, busy (a route over its work budget), or data_unavailable (a file the answer needs is damaged; the next load rebuilds it); retry after Retry-After',
};

/**
 * A params or querystring schema with each property described (its own description, else the
 * operation docs'), so that @fastify/swagger's parameters carry it.
 */
function described(schema: Schema, descriptions: Record<string, string>): Schema {
  if (!schema?.properties) return schema;
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, p]) => [
      name,
      { ...p, description: (p['description'] as string | undefined) ?? descriptions[name] ?? name },
    ]),
  );
  return { ...schema, properties };
}

function responsesOf(route: RouteDoc, example: unknown, hasBody: boolean): Record<string, unknown> {
  const schemas = (route.schema['response'] as Record<string, unknown> | undefined) ?? {};
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(schemas)) {
    const success = status.startsWith('2');
    // a 400's example names one of this operation's own parameters; an operation with none to
    // refuse has no 400 (its schemas share the generic error list)
    const message = status === '400' ? invalidParameterMessage(route.schema, hasBody) : undefined;
    if (status === '400' && !message) continue;
    // the route's own example first (it is made with the route), else the operation's docs'
    const shown = (schema as { examples?: unknown[] } | undefined)?.examples?.[0] ?? example;
    responses[status] = {
      description: success ? 'success' : (ERROR_DESCRIPTIONS[status] ?? 'ErrorResult'),
      content: {
        'application/json': {
          schema: success ? schema : { $ref: '#/components/schemas/ErrorResult' },
          ...(success && shown !== undefined ? { example: shown } : {}),
        },
      },
    };
    if (message)
      (responses[status] as { content: Record<string, Record<string, unknown>> }).content['application/json']![
        'example'
      ] = invalidParameterExample(message);
  }
  const produces = route.schema['produces'] as string[] | undefined;
  if (produces && !Object.keys(responses).some((s) => s.startsWith('2'))) {
    responses['200'] = {
      description: 'success, streamed',
      content: Object.fromEntries(produces.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
    };
  }
  if (!Object.keys(responses).some((s) => s.startsWith('2'))) {
    responses['200'] = {
      description: 'success',
      content: {
        [route.url === '/docs' ? 'text/html' : 'application/json']: {
          schema: { type: route.url === '/docs' ? 'string' : 'object' },
        },
      },
    };
  }
  if (!Object.keys(responses).some((s) => s.startsWith('4'))) {
    responses['404'] = {
      description: ERROR_DESCRIPTIONS['404'],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResult' } } },
    };
  }
  return responses;
}

/**
 * @fastify/swagger's `transform`: a route's schema as the document shows it. The route's own
 * schemas (params, querystring, body, responses) with what they cannot say added from the
 * operation's docs (./openapi-docs.ts): its names, tag and description, each parameter's
 * description, the answers as OpenAPI response objects with their examples, its security. Routes
 * outside /v1 and the documented few are hidden.
 */
export function operationSchema(route: RouteDoc): Record<string, unknown> {
  if (!route.url.startsWith('/v1/') && !DOCUMENTED.has(route.url)) return { hide: true };
  const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
  const doc = OPERATIONS[`${route.method} ${path}`];
  const own = route.schema as { operationId?: string; tags?: string[]; summary?: string; description?: string };
  const body = route.schema['body'] ?? bodyOf(doc?.requestBody as RequestBody | undefined);
  const descriptions = doc?.parameters ?? {};
  const params = described(route.schema['params'] as Schema, descriptions);
  const querystring = described(route.schema['querystring'] as Schema, descriptions);
  return {
    operationId: own.operationId ?? doc?.operationId,
    tags: own.tags ?? (doc ? [doc.tag] : undefined),
    summary: own.summary ?? doc?.summary,
    description: own.description ?? doc?.description,
    ...(params ? { params } : {}),
    ...(querystring ? { querystring } : {}),
    ...(body ? { body } : {}),
    response: responsesOf(route, doc?.example, body !== undefined),
    security: route.auth === 'none' ? [] : [{ [route.auth]: [] }],
  };
}

type RequestBody = { description?: string; content: Record<string, { schema: Record<string, unknown> }> };

/** A request body the route checks itself (the SDK upload), as the body schema @fastify/swagger documents. */
function bodyOf(requestBody: RequestBody | undefined): Record<string, unknown> | undefined {
  const schema = requestBody?.content['application/json']?.schema;
  return schema && { ...schema, ...(requestBody?.description ? { description: requestBody.description } : {}) };
}

/** Routes outside /v1 that the OpenAPI document lists too. */
const DOCUMENTED = new Set(['/healthz', '/readyz', '/docs']);

/** The document's own parts (OpenAPI 3.1: it takes the routes' JSON Schema as it is). */
export function documentBase(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Driving-behavior data service',
      version: '1',
      description:
        "Trips with dangerous-driving events, day/week/month statistics, a daily 30- and 90-day safety score with its factors, and passport tokens for your users. Every operation takes `Authorization: Bearer <apiKey>` (the SDK upload takes a passport token). Times in answers are `YYYY-MM-DD HH:MM:SS` in the app's time zone. Every error is an ErrorResult `{code, error, message, requestId}`.",
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // relative: the server the document was fetched from, whatever its address
    servers: [{ url: '/', description: 'this server' }],
    tags: TAGS,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Authorization: Bearer <apiKey> (from `node jobs/apps.js add`)',
        },
        passportToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <passport token> (from POST /v1/org-user/{org_user_id}/token; the SDK upload)',
        },
      },
      schemas: {
        ErrorResult: {
          type: 'object',
          required: ['code', 'error', 'message', 'requestId'],
          properties: {
            code: { type: 'integer', description: 'Never 0: the HTTP status times 100 plus a number (40001).' },
            error: { type: 'string', description: 'A stable machine name (invalid_parameter, unauthorized, ...).' },
            message: { type: 'string', description: 'For people; names the offending parameter first.' },
            requestId: {
              type: 'string',
              description: 'Also in the X-Request-Id header; quote it when reporting a problem.',
            },
          },
          example: {
            code: 40001,
            error: 'invalid_parameter',
            message: 'limit: must be <= 100',
            requestId: '2ddeb961-57cb-4367-8e95-454f7fcc0eac',
          },
        },
        ...tripRecordComponents(),
      },
    },
  };
}

/**
 * @fastify/swagger's `transformObject`: the document as built, with what the plugin does its own
 * way put back. Its component schemas as written here: the plugin drops the keywords beside a
 * `$ref` (OpenAPI 3.0's rule), where 3.1 keeps them (a trip record's `startTime` is an `Instant`
 * with its own description and reject reason). And each operation's path parameters first, in
 * the URL's order, then the query's: the plugin lists the query's first, where a reader (and
 * Swagger UI, which shows them in order) looks for the path's.
 */
export function finished<T>(built: T): T {
  const document = built as OpenApiObject;
  const own = (documentBase()['components'] as { schemas: Record<string, unknown> }).schemas;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    paths[path] = Object.fromEntries(
      Object.entries(operations ?? {}).map(([method, op]) => [method, pathParametersFirst(op as Operation)]),
    );
  }
  return {
    ...document,
    components: { ...document.components, schemas: { ...document.components?.schemas, ...own } },
    paths,
  } as T;
}

type OpenApiObject = {
  components?: { schemas?: Record<string, unknown> };
  paths?: Record<string, Record<string, unknown> | undefined>;
};
type Operation = { parameters?: { in: string }[] };

function pathParametersFirst(op: Operation): Operation {
  if (!op.parameters) return op;
  const inPath = op.parameters.filter((p) => p.in === 'path');
  return { ...op, parameters: [...inPath, ...op.parameters.filter((p) => p.in !== 'path')] };
}
