import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { closeStates } from '../../src/state/open.js';
import { createApi } from '../../src/api/http/server.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let key: string;

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir });
});
afterAll(async () => {
  ws.cleanup();
});

describe('before the first publish, and when something breaks', () => {
  it('answers data operations with 503 not_ready and readyz with 503, healthz with 200', async () => {
    await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/early/token',
      headers: { authorization: `Bearer ${key}` },
    });
    const res = await api.app.inject({
      method: 'GET',
      url: '/v1/org-user/early/trips',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 50301, error: 'not_ready' });
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    expect((await api.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('turns a real internal failure into a 500 that shows no internals', async () => {
    await closeStates(); // the state store is gone from under the API
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/org-user/someone/token',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      code: 50001,
      error: 'internal_error',
      message: 'internal error; quote the requestId when reporting it',
      requestId: res.headers['x-request-id'],
    });
  });
});

describe('a published slot that cannot be opened', () => {
  it('is reported on /readyz, keeps the API up, and a later good publish is picked up', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { SnapshotFollower } = await import('../../src/api/read/snapshot.js');
    const dir = join(ws.dir, 'broken-published');
    mkdirSync(dir, { recursive: true });
    const manifestFile = join(dir, 'manifest.json');
    writeFileSync(
      manifestFile,
      JSON.stringify({
        slot: 'a',
        file: 'missing.duckdb',
        version: 1,
        warehouseId: 'x',
        publishedAt: new Date().toISOString(),
      }),
    );
    const errors: unknown[] = [];
    const follower = new SnapshotFollower(dir, manifestFile, {
      connections: 1,
      pollMs: 10_000,
      onError: (e) => errors.push(e),
    });
    await follower.start();
    expect(follower.manifest).toBeNull();
    expect(follower.lastError).toMatch(/missing\.duckdb|does not exist|No such file/i);
    expect(errors).toHaveLength(1);
    await follower.refresh(); // the same broken manifest is not retried
    expect(errors).toHaveLength(1);
    follower.stop();
  });
});
