import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';
import type { Manifest } from '../publish/manifest.js';
import type { LandingStatus } from '../landing-status.js';
import type { DiskSpace } from '../disk-space.js';

/** Latency buckets in seconds: answers from the pack take milliseconds, SQL fallbacks up to seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The API's series (docs/operating.md lists them). Over a cluster's workers (AggregatorRegistry)
 * counts and histograms are summed; the snapshot's version, age and failure take the workers'
 * maximum and readiness their minimum, so that N workers never read as version N x v. Labels stay bounded: `route` is the route's
 * template (`/v1/org-user/:orgUserId/trips`, or `unmatched`), never the URL; `app` is an app id
 * (bounded by the apps configured) or `none`; `status` is the status code; `reason` is the
 * ErrorResult's stable error name.
 */
/** What the snapshot gauges read of the API's snapshot follower (src/api/read/snapshot.ts). */
export interface ServedSnapshot {
  readonly manifest: Manifest | null;
  readonly lastError: string | null;
}

export class ApiMetrics {
  readonly requests: Counter<'method' | 'route' | 'status' | 'app'>;
  readonly duration: Histogram<'method' | 'route' | 'app'>;
  readonly inFlight: Gauge;
  readonly rejected: Counter<'reason' | 'status'>;

  /** `rateLimitsLocal`: whether rate limits meant for Redis count on this machine (Redis does not answer). */
  constructor(
    registry: Registry,
    snapshots: ServedSnapshot,
    now: () => Date = () => new Date(),
    rateLimitsLocal: () => boolean = () => false,
    landing: (() => LandingStatus) | null = null,
    disk: (() => DiskSpace | null) | null = null,
  ) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'driving_http_requests_total',
      help: 'HTTP requests answered, by method, route template, status code and app',
      labelNames: ['method', 'route', 'status', 'app'],
      registers,
    });
    this.duration = new Histogram({
      name: 'driving_http_request_duration_seconds',
      help: "Time from a request's arrival to its answer, by method, route template and app",
      labelNames: ['method', 'route', 'app'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'driving_http_requests_in_flight',
      help: 'Requests arrived and not yet answered',
      registers,
    });
    this.rejected = new Counter({
      name: 'driving_http_rejected_requests_total',
      help: 'Requests refused instead of answered (4xx and 503), by the ErrorResult error name and status code; 408 and 431 are refused by the HTTP parser',
      labelNames: ['reason', 'status'],
      registers,
    });
    // labelled by the served slot (a or b): a gauge without labels reads 0 after reset, where
    // these must be absent while nothing is published (an age of 0 would read as fresh)
    new Gauge({
      name: 'driving_snapshot_age_seconds',
      help: 'Seconds since the served snapshot was published, by slot (absent while nothing is published)',
      labelNames: ['slot'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        const manifest = snapshots.manifest;
        const published = Date.parse(manifest?.publishedAt ?? '');
        if (manifest && Number.isFinite(published))
          this.set({ slot: manifest.slot }, Math.max(0, (now().getTime() - published) / 1000));
      },
    });
    new Gauge({
      name: 'driving_snapshot_version',
      help: 'Version of the served snapshot, by slot (absent while nothing is published)',
      labelNames: ['slot'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        if (snapshots.manifest) this.set({ slot: snapshots.manifest.slot }, snapshots.manifest.version);
      },
    });
    new Gauge({
      name: 'driving_api_ready',
      help: "1 while /readyz answers 200 (a snapshot is served), 0 while it answers 503; over a cluster's workers, 0 if one of them is not ready",
      registers,
      aggregator: 'min',
      collect() {
        this.set(snapshots.manifest ? 1 : 0);
      },
    });
    new Gauge({
      name: 'driving_snapshot_open_failed',
      help: '1 while the newest published snapshot could not be opened and the previous one is served (/readyz says stale)',
      registers,
      aggregator: 'max',
      collect() {
        this.set(snapshots.lastError !== null ? 1 : 0);
      },
    });
    if (landing) {
      // every worker counts the same folder: the maximum, not the sum
      new Gauge({
        name: 'driving_landing_files',
        help: 'Files in the landing area: waiting for the load, set aside by it (failed: unreadable, or its change failed a check), or refused (links, FIFOs, folders: never taken, not waiting)',
        labelNames: ['state'],
        registers,
        aggregator: 'max',
        collect() {
          const status = landing();
          this.set({ state: 'waiting' }, status.waiting);
          this.set({ state: 'failed' }, status.failed);
          this.set({ state: 'refused' }, status.refused);
        },
      });
      new Gauge({
        name: 'driving_landing_oldest_waiting_seconds',
        help: 'Age of the oldest file waiting for the load (0 when none waits)',
        registers,
        aggregator: 'max',
        collect() {
          this.set(landing().oldestWaitingSeconds ?? 0);
        },
      });
    }
    if (disk) {
      // the disk the uploads are written to: every worker reads the same one, the maximum, not the sum
      new Gauge({
        name: 'driving_disk_free_bytes',
        help: 'Bytes still free for the service on the disk of the landing area (where uploads are written), by statfs; absent when it cannot be read',
        registers,
        aggregator: 'max',
        collect() {
          this.reset();
          const space = disk();
          if (space) this.set(space.freeBytes);
        },
      });
      new Gauge({
        name: 'driving_disk_size_bytes',
        help: 'Size of the disk of the landing area, by statfs; absent when it cannot be read',
        registers,
        aggregator: 'max',
        collect() {
          this.reset();
          const space = disk();
          if (space) this.set(space.sizeBytes);
        },
      });
    }
    new Gauge({
      name: 'driving_rate_limits_local',
      help: '1 while rate limits meant for Redis (--redis-url) count on this machine alone, because Redis does not answer',
      registers,
      aggregator: 'max',
      collect() {
        this.set(rateLimitsLocal() ? 1 : 0);
      },
    });
  }
}

/**
 * Node's process series (CPU, memory, event-loop lag, handles), once per registry; without
 * prom-client's three gauges named `_total` (which Prometheus' linter refuses: `_total` is for
 * counters), whose values `nodejs_active_handles`, `_requests` and `_resources` give by type.
 */
export function processMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    registry.removeSingleMetric(name);
}
