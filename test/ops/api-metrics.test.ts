// The API's refusals counted by reason in process (inject): 503 not_ready before anything is
// published, 429 once the key's rate limit is reached, 413 for a body over the limit; readiness 0
// and no snapshot series while nothing is published; nothing left in flight afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { PassportStore } from '../../src/passport/store.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
const registry = new Registry();
let key = '';

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  await passport.ensureAccounts(ws.appId, ['driver-1']);
  passport.close();
  api = await createApi({
    dataDir: ws.dir,
    metrics: registry,
    limits: { ratePerApp: 3, appRateWindowMs: 60_000, bodyLimitBytes: 1024 },
  });
});
afterAll(async () => {
  await api?.close();
  ws?.cleanup();
});

const value = async (name: string, labels: Record<string, string> = {}): Promise<number | undefined> => {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = metric?.values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return found?.value;
};

describe('API refusals by reason', () => {
  it('counts 413, 503 not_ready and 429 by their error names, per app', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const big = await api.app.inject({
      method: 'DELETE',
      url: '/v1/org-user/driver-1',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ pad: 'x'.repeat(4096) }),
    });
    expect(big.statusCode).toBe(413);
    for (let i = 0; i < 2; i++)
      expect((await api.app.inject({ url: '/v1/org-user/driver-1/trips', headers: auth })).statusCode).toBe(503);
    expect((await api.app.inject({ url: '/v1/org-user/driver-1/trips', headers: auth })).statusCode).toBe(429);

    expect(await value('driving_http_rejected_requests_total', { reason: 'payload_too_large', status: '413' })).toBe(1);
    expect(await value('driving_http_rejected_requests_total', { reason: 'not_ready', status: '503' })).toBe(2);
    expect(await value('driving_http_rejected_requests_total', { reason: 'rate_limited', status: '429' })).toBe(1);
    expect(
      await value('driving_http_requests_total', {
        route: '/v1/org-user/:org_user_id/trips',
        status: '503',
        app: ws.appId,
      }),
    ).toBe(2);
    expect(await value('driving_http_requests_in_flight')).toBe(0);
  });

  it('says not ready, and no snapshot version or age, while nothing is published', async () => {
    expect(await value('driving_api_ready')).toBe(0);
    expect(await value('driving_snapshot_version')).toBeUndefined();
    expect(await value('driving_snapshot_age_seconds')).toBeUndefined();
    expect((await api.app.inject({ url: '/readyz' })).statusCode).toBe(503);
  });
});
