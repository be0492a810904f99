// What a cluster's primary answers (prom-client's AggregatorRegistry over its workers' series):
// requests summed, the snapshot's version the workers' maximum (never N x the version),
// readiness their minimum. Two registries stand for two workers; the aggregation is prom-client's own.
import { describe, expect, it } from 'vitest';
import { AggregatorRegistry, Registry } from 'prom-client';
import { ApiMetrics } from '../../src/metrics/api.js';
import type { Manifest } from '../../src/publish/manifest.js';

const manifest = (version: number): Manifest => ({
  slot: 'a',
  file: 'slot-a.duckdb',
  version,
  warehouseId: 'w',
  publishedAt: '2026-11-25T00:00:00.000Z',
});

describe("metrics summed over a cluster's workers", () => {
  it('sums requests, takes the newest version and the oldest age, and is ready only when every worker is', async () => {
    const now = () => new Date('2026-11-25T01:00:00.000Z');
    const workers = [
      { registry: new Registry(), snapshots: { manifest: manifest(7), lastError: null } },
      { registry: new Registry(), snapshots: { manifest: null as Manifest | null, lastError: null } },
    ];
    workers[1]!.snapshots.manifest = { ...manifest(6), publishedAt: '2026-11-24T23:00:00.000Z' };
    const metrics = workers.map((w) => new ApiMetrics(w.registry, w.snapshots, now));
    metrics[0]!.requests.inc(
      { method: 'GET', route: '/v1/org-user/:org_user_id/trips', status: '200', app: 'app_1' },
      3,
    );
    metrics[1]!.requests.inc(
      { method: 'GET', route: '/v1/org-user/:org_user_id/trips', status: '200', app: 'app_1' },
      4,
    );
    const ready = await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON()));
    const text = await AggregatorRegistry.aggregate(ready).metrics();
    expect(text).toContain(
      'driving_http_requests_total{method="GET",route="/v1/org-user/:org_user_id/trips",status="200",app="app_1"} 7',
    );
    expect(text).toContain('driving_snapshot_version{slot="a"} 7');
    // 1 h and 2 h old: the older one
    expect(text).toContain('driving_snapshot_age_seconds{slot="a"} 7200');
    expect(text).toMatch(/^driving_api_ready 1$/m);

    workers[1]!.snapshots.manifest = null;
    const oneNotReady = await AggregatorRegistry.aggregate(
      await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON())),
    ).metrics();
    expect(oneNotReady).toMatch(/^driving_api_ready 0$/m);
  });
});
