import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { createApi } from '../../src/api/http/server.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { tripRecord } from '../helpers/trips.js';

const clock = new Date('2026-11-20T12:00:00Z');

describe('a full disk under the API', () => {
  let disk: Tmpfs | string;
  let api: Awaited<ReturnType<typeof createApi>>;
  let key: string;
  let appId: string;
  const registry = new Registry();
  beforeAll(async () => {
    disk = mountTmpfs(8 * 1024 * 1024);
    if (typeof disk === 'string') return;
    const dataDir = join(disk.dir, 'data');
    const apps = new AppStore(pathsFor(dataDir).appsFile);
    appId = (await apps.add({ name: 'full disk', timeZone: 'UTC' })).appId;
    key = (await apps.rotateKey(appId)).apiKey;
    api = await createApi({ dataDir, now: () => clock, metrics: registry });
  });
  afterAll(async () => {
    await api?.close();
    if (typeof disk !== 'string') disk.unmount();
  });

  it('answers every write 503 storage_full with Retry-After, never 500, and the same requests succeed once there is room', async (context) => {
    if (typeof disk === 'string') return context.skip(disk);
    const call = (method: 'POST' | 'DELETE', url: string, auth: string, payload?: object) =>
      api.app.inject({ method, url, headers: { authorization: `Bearer ${auth}` }, ...(payload ? { payload } : {}) });
    const issued = await call('POST', '/v1/org-user/driver-1/token', key);
    expect(issued.statusCode).toBe(200);
    const token = issued.json().token as string;
    const upload = tripRecord({ appId, tripId: 'full-1', start: '2026-11-20T08:00:00Z', seconds: 600 });
    const landing = join(disk.dir, 'data', 'landing');

    const filler = disk.fill();
    const answers = [
      await call('POST', '/v1/sdk/trips', token, upload),
      await call('POST', '/v1/org-user/driver-2/token', key),
      await call('DELETE', '/v1/org-user/driver-1', key),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 50306, error: 'storage_full' });
      expect(res.json().message).toMatch(/\(no space left on the disk\); nothing was stored/);
      expect(res.headers['retry-after']).toBe('30');
    }
    // nothing of the refused upload is left behind
    expect(existsSync(landing) ? readdirSync(landing) : []).toEqual([]);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/driving_http_rejected_requests_total\{reason="storage_full",status="503"\} 3/);
    expect(metrics).toMatch(/driving_disk_free_bytes \d/);
    expect(metrics).toMatch(/driving_disk_size_bytes \d/);

    rmSync(filler);
    expect((await call('POST', '/v1/sdk/trips', token, upload)).statusCode).toBe(202);
    expect(readdirSync(landing).filter((n) => n.endsWith('.ndjson'))).toHaveLength(1);
    expect((await call('POST', '/v1/org-user/driver-2/token', key)).statusCode).toBe(200);
    expect((await call('DELETE', '/v1/org-user/driver-1', key)).statusCode).toBe(200);
  });
});
