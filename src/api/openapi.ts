/** A route as registered, for the OpenAPI document. */
export interface RouteDoc {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  auth: 'apiKey' | 'passportToken' | 'none';
}

/** A parameter's description, lifted from its schema to the parameter (where OpenAPI shows it). */
const describedBy = (schema: unknown): { description?: string } => {
  const d = (schema as { description?: unknown } | null)?.description;
  return typeof d === 'string' ? { description: d } : {};
};

/** OpenAPI 3.1 from the routes' own JSON schemas (3.1 takes JSON Schema as it is). */
export function openApiDocument(routes: RouteDoc[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.method === 'HEAD') continue;
    const path = route.url.replace(/:([a-z_]+)/g, '{$1}');
    const params = route.schema['params'] as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const query = route.schema['querystring'] as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const parameters = [
      ...Object.entries(params?.properties ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, ...describedBy(schema), schema })),
      ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: query?.required?.includes(name) ?? false, ...describedBy(schema), schema })),
    ];
    const responses = Object.fromEntries(
      Object.entries((route.schema['response'] as Record<string, unknown>) ?? {}).map(([status, schema]) => [
        status, { description: status === '200' ? 'success' : 'ErrorResult', content: { 'application/json': { schema } } },
      ]),
    );
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.schema['summary'],
      ...(route.schema['operationId'] ? { operationId: route.schema['operationId'] } : {}),
      ...(route.schema['tags'] ? { tags: route.schema['tags'] } : {}),
      ...(route.schema['description'] ? { description: route.schema['description'] } : {}),
      parameters,
      ...(route.schema['body'] ? { requestBody: { content: { 'application/json': { schema: route.schema['body'] } } } } : {}),
      responses,
      security: route.auth === 'none' ? [] : [{ [route.auth]: [] }],
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Driving-behavior data service', version: '1' },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <apiKey>' },
        passportToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <passport token> (SDK upload)' },
      },
    },
    paths,
  };
}
