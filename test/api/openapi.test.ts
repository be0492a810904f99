import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApi } from '../../src/api/http/server.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

// The reference an integrator reads: the OpenAPI document passes Redocly's recommended rules,
// documents every operation, and /docs renders it in a real browser when one is installed.
const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let base: string;
let scratch: string;
type Operation = {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: { name: string; description?: string }[];
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
};
let doc: { paths: Record<string, Record<string, Operation>> };

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  api = await createApi({ dataDir: ws.dir, pollMs: 50 });
  base = await api.app.listen({ host: '127.0.0.1', port: 0 });
  doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as typeof doc;
  scratch = mkdtempSync(join(tmpdir(), 'openapi-'));
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const file = join(scratch, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const { stdout } = await run(
      process.execPath,
      ['node_modules/@redocly/cli/bin/cli.js', 'lint', '--extends=recommended', '--format=json', file],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('gives every operation an id, a tag, a description, described parameters and an example answer', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ at: `${method} ${path}`, op })),
    );
    expect(operations.map((o) => o.at)).toEqual(
      expect.arrayContaining([
        'get /healthz',
        'get /readyz',
        'get /docs',
        'post /v1/sdk/trips',
        'get /v1/openapi.json',
      ]),
    );
    const ids = operations.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(operations.length);
    for (const { at, op } of operations) {
      expect(op.operationId, at).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.tags?.length, at).toBe(1);
      expect(op.description?.length ?? 0, at).toBeGreaterThan(20);
      for (const p of op.parameters ?? []) expect(p.description?.length ?? 0, `${at} ${p.name}`).toBeGreaterThan(3);
    }
    for (const { at, op } of operations.filter(
      (o) => o.at.includes('/v1/org-user') || o.at.includes('/v1/token') || o.at.includes('sdk'),
    )) {
      const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
      expect(success?.[1].content?.['application/json']?.example, at).toBeDefined();
    }
  });

  it('states the license package.json and LICENSE state', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    const info = (doc as unknown as { info: { license: { identifier: string } } }).info;
    expect(pkg.license).toBe('Apache-2.0');
    expect(info.license.identifier).toBe(pkg.license);
    expect(readFileSync('LICENSE', 'utf8')).toContain('Apache License');
  });

  it("shows, as each operation's 400 example, one of that operation's own parameters", () => {
    const seen: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const bad = (
          op.responses as Record<string, { content?: Record<string, { example?: { message?: string } }> }> | undefined
        )?.['400'];
        if (!bad) continue;
        const message = bad.content?.['application/json']?.example?.message ?? '';
        const names = [
          ...((op as { parameters?: { name: string }[] }).parameters ?? []).map((p) => p.name),
          ...Object.keys(
            (op as { requestBody?: { content: Record<string, { schema: { properties?: object } }> } }).requestBody
              ?.content['application/json']?.schema.properties ?? {},
          ),
          ...((op as { requestBody?: unknown }).requestBody ? ['body'] : []),
        ];
        expect(names, `${method} ${path}: ${message}`).toContain(message.split(':')[0]);
        seen.push(message);
      }
    }
    expect(seen).toContain('type: must be equal to one of the allowed values: day, week, month');
    expect(seen).toContain('tolerance: must be <= 1000');
  });

  it('refuses a value outside any enum-valued query parameter with a 400 that names the allowed values', async () => {
    const { AppStore } = await import('../../src/apps/store.js');
    const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
    const tried: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const parameters = (op.parameters ?? []) as {
          name: string;
          in: string;
          required?: boolean;
          schema?: { enum?: unknown[] };
        }[];
        for (const p of parameters) {
          if (p.in !== 'query' || !Array.isArray(p.schema?.enum)) continue;
          // the operation's other required parameters, valid, so that the enum is what is refused
          const others = parameters
            .filter((o) => o.in === 'query' && o.required && o.name !== p.name)
            .map((o) => `&${o.name}=${o.schema?.enum?.[0] ?? '2026-11-01'}`);
          const url = `${path.replace(/\{[^}]+\}/g, 'driver-1')}?${p.name}=7${others.join('')}`;
          const res = await api.app.inject({
            method: method.toUpperCase() as 'GET',
            url,
            headers: { authorization: `Bearer ${key}` },
          });
          expect(res.statusCode, `${method} ${url}`).toBe(400);
          expect(res.json(), `${method} ${url}`).toMatchObject({
            error: 'invalid_parameter',
            message: `${p.name}: must be equal to one of the allowed values: ${p.schema.enum.join(', ')}`,
          });
          tried.push(`${p.name}=${p.schema.enum.join('|')}`);
        }
      }
    }
    expect(tried).toEqual(
      expect.arrayContaining(['type=day|week|month', 'interval=30|90', 'status=pending|failed|delivered|filtered']),
    );
  });

  it('names operations by what they do, never by numbers of a document the reader cannot see', () => {
    expect(JSON.stringify(doc).match(/\b(decisions?|operations?|section) \d+\b/gi) ?? []).toEqual([]);
  });

  it('describes the upload body with the trip record schema', () => {
    const upload = doc.paths['/v1/sdk/trips']?.['post'] as unknown as {
      requestBody: { content: Record<string, { schema: { oneOf: unknown[] } }> };
    };
    expect(upload.requestBody.content['application/json']?.schema.oneOf).toEqual([
      { $ref: '#/components/schemas/TripRecord' },
      { type: 'array', minItems: 1, maxItems: 500, items: { $ref: '#/components/schemas/TripRecord' } },
    ]);
    expect(JSON.stringify(doc)).not.toContain('$defs');
  });

  it("documents the upload's 415 (an encoding other than gzip, a charset other than UTF-8) as an ErrorResult", () => {
    const upload = doc.paths['/v1/sdk/trips']?.['post'] as unknown as {
      responses: Record<string, { description: string; content: Record<string, { schema: unknown }> }>;
    };
    expect(upload.responses['415']?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ErrorResult',
    });
    expect(upload.responses['415']?.description).toContain('unsupported_media_type');
  });
});

describe('/docs', () => {
  it('serves Swagger UI and its files from the service itself', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    // no other site may frame the page (clickjacking)
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.every((r) => r.startsWith('/docs/'))).toBe(true);
    for (const ref of refs) expect((await fetch(`${base}${ref}`)).status, ref).toBe(200);
    expect((await fetch(`${base}/docs/../apps.json`)).status).toBe(404);
    expect((await fetch(`${base}/docs/package.json`)).status).toBe(404);
  });

  it.runIf(existsSync(CHROMIUM))('renders every operation in headless Chromium', async () => {
    const { stdout } = await run(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${join(scratch, 'chromium')}`,
        '--virtual-time-budget=20000',
        '--dump-dom',
        `${base}/docs`,
      ],
      { maxBuffer: 64 * 1024 * 1024, timeout: 90_000 },
    );
    // Swagger UI built the page from the document: one block per operation, with its summary
    const rendered = [...stdout.matchAll(/class="opblock-summary-path" data-path="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(rendered)).toEqual(new Set(Object.keys(doc.paths)));
    expect(stdout).toContain('List trips, newest first');
  });
});
