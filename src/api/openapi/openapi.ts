import { OPERATIONS, TAGS } from './openapi-docs.js';
import { invalidParameterExample, invalidParameterMessage } from './openapi-error-example.js';
import { tripRecordComponents } from '../upload/trip-record-schema.js';

/** A route as registered, for the OpenAPI document. */
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

/** An operation's parameters, each with its description. */
function parametersOf(route: RouteDoc, described: Record<string, string>): Record<string, unknown>[] {
  const params = route.schema['params'] as Schema;
  const query = route.schema['querystring'] as Schema;
  const one = (name: string, where: 'path' | 'query', schema: Record<string, unknown>, required: boolean) => ({
    name,
    in: where,
    required,
    description: (schema['description'] as string | undefined) ?? described[name] ?? name,
    schema,
  });
  return [
    ...Object.entries(params?.properties ?? {}).map(([name, schema]) => one(name, 'path', schema, true)),
    ...Object.entries(query?.properties ?? {}).map(([name, schema]) =>
      one(name, 'query', schema, query?.required?.includes(name) ?? false),
    ),
  ];
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

/** OpenAPI 3.1 from the routes' own JSON schemas (3.1 takes JSON Schema as it is). */
export function openApiDocument(routes: RouteDoc[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.method === 'HEAD') continue;
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const doc = OPERATIONS[`${route.method} ${path}`];
    const own = route.schema as { operationId?: string; tags?: string[]; summary?: string; description?: string };
    const requestBody = route.schema['body']
      ? { required: true, content: { 'application/json': { schema: route.schema['body'] } } }
      : doc?.requestBody;
    const operations = paths[path] ?? {};
    paths[path] = operations;
    operations[route.method.toLowerCase()] = {
      operationId: own.operationId ?? doc?.operationId,
      tags: own.tags ?? (doc ? [doc.tag] : undefined),
      summary: own.summary ?? doc?.summary,
      description: own.description ?? doc?.description,
      parameters: parametersOf(route, doc?.parameters ?? {}),
      ...(requestBody ? { requestBody } : {}),
      responses: responsesOf(route, doc?.example, requestBody !== undefined),
      security: route.auth === 'none' ? [] : [{ [route.auth]: [] }],
    };
  }
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
    paths,
  };
}
