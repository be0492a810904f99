import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * `GET /docs`: the API reference rendered by Swagger UI from the service's own OpenAPI document.
 * Swagger UI's files come from the `swagger-ui-dist` package and are served here (no CDN), read
 * once on first use.
 */
const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Driving-behavior data service: API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// a file, not an inline script, so the page's Content-Security-Policy can forbid inline scripts
const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

// frame-ancestors 'none' (and X-Frame-Options for browsers without CSP 2): no other site can frame
// the page to trick a click; base-uri and form-action keep an injected tag from sending anything away
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const cache = new Map<string, Buffer>();
const asset = (name: string): Buffer => {
  let bytes = cache.get(name);
  if (!bytes) {
    bytes = readFileSync(join(dist, ASSETS[name]?.file ?? name));
    cache.set(name, bytes);
  }
  return bytes;
};

export function docsRoutes(app: FastifyInstance): void {
  app.get('/docs', { config: { auth: 'none' } }, async (_request, reply) =>
    reply
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .type('text/html; charset=utf-8')
      .send(PAGE),
  );
  app.get('/docs/init.js', { config: { auth: 'none' } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').send(INIT),
  );
  app.get<{ Params: { name: string } }>('/docs/:name', { config: { auth: 'none' } }, async (request, reply) => {
    const known = ASSETS[request.params.name];
    if (!known) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=86400').type(known.type).send(asset(request.params.name));
  });
}
