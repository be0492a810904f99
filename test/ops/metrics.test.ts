// Metrics from the real processes: serve.js and deliver.js scraped live on their own loopback
// listeners, checked by promtool (Prometheus' own checker); requests counted by route template and
// app, never by URL; /metrics absent from the public port; a job's textfile written atomically,
// keeping the last success time through a failed run; the continuous load's file written by
// prom-client with the same series as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { runScore } from '../../src/jobs/score.js';
import { writeJobMetrics } from '../../src/metrics/textfile.js';
import { WatchMetrics, watchMetricsFile } from '../../src/metrics/watch-textfile.js';
import { runWatch, type WatchResult } from '../../src/jobs/watch.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tripRecord } from '../helpers/trips.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { runTool, start, tool, type Running } from '../helpers/processes.js';
import { setWebhook, writeEvents } from '../webhooks/setup.js';

const PROMTOOL = tool('promtool');
const now = new Date('2026-11-21T12:00:00Z');
let ws: Workspace;
let key = '';
const running: Running[] = [];

/** The value of one series in a scrape, or undefined: `name{labels} value`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const got = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(line.split(' ').pop());
  }
  return undefined;
}

/** promtool's lint of a scrape: exit 0 and nothing said. */
function checkMetrics(text: string): void {
  if (!PROMTOOL) return;
  const r = runTool(PROMTOOL, ['check', 'metrics'], text);
  expect(r.output).toBe('');
  expect(r.status).toBe(0);
}

beforeAll(async () => {
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const users = await passport.ensureAccounts(ws.appId, ['driver-0', 'driver-1']);
  passport.close();
  const trips = Array.from({ length: 6 }, (_, i) =>
    tripRecord({
      appId: ws.appId,
      tripId: `t-${i}`,
      userId: users.get(`driver-${i % 2}`) as number,
      orgUserId: `driver-${i % 2}`,
      start: `2026-11-20T0${i}:00:00Z`,
      seconds: 300,
    }),
  );
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'a.ndjson'), trips)], now });
  await runScore({ dataDir: ws.dir, now });
  if (!PROMTOOL)
    process.stderr.write(
      'metrics.test: promtool not installed; scrapes are checked by these tests only (.ci/run installs it)\n',
    );
});
afterAll(() => {
  for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  ws?.cleanup();
});

describe('serve.js metrics', () => {
  let api = '';
  let metrics = '';
  beforeAll(async () => {
    // one process (--workers 1): a cluster's primary summing its workers' series is ops/cluster-scrape
    const serve = start('jobs/serve.js', [
      '--data-dir',
      ws.dir,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--workers',
      '1',
      '--log',
      'false',
    ]);
    running.push(serve);
    api = await serve.said(/listening on (http:\/\/\S+)/);
    metrics = await serve.said(/metrics on (http:\/\/\S+)/);
  });
  const get = (path: string, auth = true) =>
    fetch(`${api}${path}`, { headers: auth ? { authorization: `Bearer ${key}` } : {} });

  it('counts requests by route template, status and app, never by the URL', async () => {
    for (const driver of ['driver-0', 'driver-1', 'driver-0']) {
      const res = await get(`/v1/org-user/${driver}/trips`);
      expect(res.status, await res.text()).toBe(200);
    }
    expect((await get('/v1/org-user/driver-0/trips', false)).status).toBe(401);
    expect((await get('/v1/org-user/driver-0/trips?limit=0')).status).toBe(400);
    expect((await get('/v1/no-such-route')).status).toBe(404);
    const text = await (await fetch(metrics)).text();
    const route = '/v1/org-user/:org_user_id/trips';
    expect(sample(text, 'driving_http_requests_total', { method: 'GET', route, status: '200', app: ws.appId })).toBe(3);
    expect(sample(text, 'driving_http_requests_total', { route, status: '401', app: 'none' })).toBe(1);
    expect(sample(text, 'driving_http_requests_total', { route, status: '400', app: ws.appId })).toBe(1);
    expect(sample(text, 'driving_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sample(text, 'driving_http_request_duration_seconds_count', { route, app: ws.appId })).toBe(4);
    expect(sample(text, 'driving_http_rejected_requests_total', { reason: 'unauthorized', status: '401' })).toBe(1);
    expect(sample(text, 'driving_http_rejected_requests_total', { reason: 'invalid_parameter', status: '400' })).toBe(
      1,
    );
    expect(sample(text, 'driving_http_rejected_requests_total', { reason: 'route_not_found', status: '404' })).toBe(1);
    // no label carries a URL's own parts: not a driver id, not the unknown path
    expect(text).not.toMatch(/driver-[01]|no-such-route/);
    // the scrape itself is not an API request
    expect(text).not.toContain('route="/metrics"');
    checkMetrics(text);
  });

  it("says the served snapshot's version and age, and that it is ready", async () => {
    const text = await (await fetch(metrics)).text();
    const manifest = JSON.parse(readFileSync(ws.paths.manifestFile, 'utf8'));
    expect(sample(text, 'driving_snapshot_version', { slot: manifest.slot })).toBe(manifest.version);
    const age = sample(text, 'driving_snapshot_age_seconds', { slot: manifest.slot }) as number;
    const expected = (Date.now() - Date.parse(manifest.publishedAt)) / 1000;
    expect(Math.abs(age - expected)).toBeLessThan(60);
    expect(sample(text, 'driving_api_ready')).toBe(1);
    expect(sample(text, 'driving_http_requests_in_flight')).toBe(0);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('counts a refusal of the HTTP parser (431) by its reason', async () => {
    const res = await fetch(`${api}/v1/org-user/driver-0/trips`, {
      headers: { authorization: `Bearer ${key}`, 'x-big': 'a'.repeat(20_000) },
    });
    expect(res.status).toBe(431);
    const text = await (await fetch(metrics)).text();
    expect(sample(text, 'driving_http_rejected_requests_total', { reason: 'headers_too_large', status: '431' })).toBe(
      1,
    );
  });

  it('serves /metrics on its own listener only: the public port answers 404, the metrics port nothing else', async () => {
    const pub = await get('/metrics');
    expect(pub.status).toBe(404);
    expect((await pub.json()).error).toBe('route_not_found');
    expect((await fetch(metrics.replace('/metrics', '/v1/org-user/driver-0/trips'))).status).toBe(404);
    expect(new URL(metrics).hostname).toBe('127.0.0.1');
  });
});

describe('deliver.js metrics', () => {
  let receiver: Receiver;
  let ws: Workspace;
  beforeAll(async () => {
    ws = await workspace('UTC');
  });
  afterAll(async () => {
    await receiver?.close();
    ws?.cleanup();
  });

  it("shows deliveries by result and the outbox's pending depth and oldest pending age", async () => {
    // events t-0..t-2 are refused (500: retried later), the rest delivered
    receiver = await startReceiver((r) => ({ status: /"tripId":"e-[0-2]"/.test(r.rawBody.toString()) ? 500 : 204 }));
    await setWebhook(ws, receiver.url);
    const createdAt = '2026-11-21T03:00:00.000Z';
    writeEvents(
      ws,
      'metrics-test.ndjson',
      Array.from({ length: 8 }, (_, i) => ({ id: `e-${i}` })),
      createdAt,
    );
    // an app without a webhook URL: its event waits, never due
    const unaddressed = (await new AppStore(ws.paths.appsFile).add({ name: 'no url', timeZone: 'UTC' })).appId;
    writeEvents(ws, 'metrics-test-other.ndjson', [{ id: 'o-1', appId: unaddressed }], createdAt);
    const env = {
      ...process.env,
      DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
      DRIVING_WEBHOOK_POLL: '50ms',
      DRIVING_WEBHOOK_TIMEOUT: '2s',
    };
    const deliver = start('jobs/deliver.js', ['--data-dir', ws.dir, '--metrics-port', '0'], env);
    running.push(deliver);
    const url = await deliver.said(/metrics on (http:\/\/\S+)/);
    let text = '';
    const deadline = Date.now() + 60_000;
    do {
      await new Promise((r) => setTimeout(r, 100));
      text = await (await fetch(url)).text();
      // an attempt is counted when it ends and shows in the outbox once recorded, at the next turn
    } while (
      ((sample(text, 'driving_webhook_deliveries_total', { result: 'delivered' }) ?? 0) +
        (sample(text, 'driving_webhook_deliveries_total', { result: 'retried' }) ?? 0) <
        8 ||
        sample(text, 'driving_webhook_outbox_pending_events', { app: ws.appId }) !== 3) &&
      Date.now() < deadline
    );
    expect(sample(text, 'driving_webhook_deliveries_total', { result: 'delivered' })).toBe(5);
    expect(sample(text, 'driving_webhook_deliveries_total', { result: 'retried' })).toBe(3);
    expect(sample(text, 'driving_webhook_deliveries_total', { result: 'dead_lettered' })).toBe(0);
    expect(sample(text, 'driving_webhook_attempts_total')).toBe(8);
    expect(sample(text, 'driving_webhook_intake_events_total')).toBe(9);
    expect(sample(text, 'driving_webhook_outbox_pending_events', { app: ws.appId })).toBe(3);
    // retried a minute later: none due now
    expect(sample(text, 'driving_webhook_outbox_due_events', { app: ws.appId })).toBe(0);
    const age = sample(text, 'driving_webhook_outbox_oldest_pending_age_seconds', { app: ws.appId }) as number;
    expect(Math.abs(age - (Date.now() - Date.parse(createdAt)) / 1000)).toBeLessThan(60);
    expect(sample(text, 'driving_webhook_dead_letters', { app: ws.appId })).toBeUndefined();
    expect(sample(text, 'driving_webhook_outbox_pending_events', { app: unaddressed })).toBe(1);
    expect(sample(text, 'driving_webhook_outbox_due_events', { app: unaddressed })).toBeUndefined();
    checkMetrics(text);
    deliver.child.kill('SIGTERM');
    expect(await deliver.exited).toBe(0);
  });
});

describe('batch job metrics (textfile collector)', () => {
  it('score.js writes its run to driving_job_score.prom: success time, duration, exit status, users scored', async () => {
    const dir = join(ws.dir, 'textfile');
    const before = Date.now() / 1000;
    const score = start('jobs/score.js', ['--data-dir', ws.dir, '--metrics-dir', dir, '--date', '2026-11-21']);
    expect(await score.exited).toBe(0);
    const text = readFileSync(join(dir, 'driving_job_score.prom'), 'utf8');
    expect(sample(text, 'driving_job_exit_status', { job: 'score' })).toBe(0);
    expect(sample(text, 'driving_job_last_success_timestamp_seconds', { job: 'score' })).toBeGreaterThanOrEqual(
      Math.floor(before),
    );
    expect(sample(text, 'driving_job_duration_seconds', { job: 'score' })).toBeGreaterThan(0);
    // two drivers, one app, one date
    expect(sample(text, 'driving_job_records', { job: 'score', outcome: 'scored' })).toBe(2);
    expect(readdirSync(dir)).toEqual(['driving_job_score.prom']);
    checkMetrics(text);
  });

  it('a failed run keeps the last success time and says its exit status', async () => {
    const dir = join(ws.dir, 'textfile-unit');
    await writeJobMetrics(dir, 'load', {
      startedAt: new Date(1_000_000_000_000),
      seconds: 12.5,
      exitCode: 0,
      records: { loaded: 40, purged: 2 },
      rejected: { invalid_time: 3 },
    });
    let text = readFileSync(join(dir, 'driving_job_load.prom'), 'utf8');
    expect(sample(text, 'driving_job_last_success_timestamp_seconds', { job: 'load' })).toBe(1_000_000_012.5);
    expect(sample(text, 'driving_job_records_rejected', { job: 'load', reason: 'invalid_time' })).toBe(3);
    checkMetrics(text);
    await writeJobMetrics(dir, 'load', { startedAt: new Date(1_000_086_400_000), seconds: 1, exitCode: 3 });
    text = readFileSync(join(dir, 'driving_job_load.prom'), 'utf8');
    expect(sample(text, 'driving_job_exit_status', { job: 'load' })).toBe(3);
    expect(sample(text, 'driving_job_last_run_timestamp_seconds', { job: 'load' })).toBe(1_000_086_401);
    expect(sample(text, 'driving_job_last_success_timestamp_seconds', { job: 'load' })).toBe(1_000_000_012.5);
    expect(sample(text, 'driving_job_records', { job: 'load', outcome: 'loaded' })).toBeUndefined();
    expect(readdirSync(dir)).toEqual(['driving_job_load.prom']);
  });
});

describe("the continuous load's metrics file", () => {
  /** Each family of a file: `name type`, in the file's order. */
  const families = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.slice('# TYPE '.length));

  it('writes its series through prom-client: the same names, types and labels, last-batch series only once a batch ended', async () => {
    const dir = join(ws.dir, 'textfile-watch');
    let logErrors = 0;
    const metrics = new WatchMetrics(new Date(1_000_000_000_000), () => logErrors);
    let text = readFileSync(await metrics.write(dir), 'utf8');
    expect(families(text)).toEqual([
      'driving_load_lag_seconds histogram',
      'driving_load_batches_total counter',
      'driving_load_watch_start_timestamp_seconds gauge',
      'driving_load_watch_heartbeat_timestamp_seconds gauge',
      'driving_load_backlog_files gauge',
      'driving_load_backlog_oldest_seconds gauge',
      'driving_load_log_write_errors_total counter',
    ]);
    expect(sample(text, 'driving_load_batches_total', { outcome: 'ok' })).toBe(0);
    expect(sample(text, 'driving_load_batches_total', { outcome: 'failed' })).toBe(0);
    expect(sample(text, 'driving_load_watch_start_timestamp_seconds')).toBe(1_000_000_000);
    checkMetrics(text);

    metrics.batchEnded(true, [0.4, 2.5, 40], 1.5, { waiting: 3, oldestWaitingSeconds: 7 }, new Date(1_000_000_100_000));
    metrics.batchEnded(false, [], 0.25, { waiting: 4, oldestWaitingSeconds: null }, new Date(1_000_000_200_000));
    logErrors = 2;
    const before = Date.now() / 1000;
    text = readFileSync(await metrics.write(dir), 'utf8');
    expect(families(text)).toContain('driving_load_last_batch_timestamp_seconds gauge');
    expect(families(text)).toContain('driving_load_last_batch_duration_seconds gauge');
    expect(sample(text, 'driving_load_lag_seconds_bucket', { le: '0.5' })).toBe(1);
    expect(sample(text, 'driving_load_lag_seconds_bucket', { le: '3' })).toBe(2);
    expect(sample(text, 'driving_load_lag_seconds_bucket', { le: '30' })).toBe(2);
    expect(sample(text, 'driving_load_lag_seconds_bucket', { le: '60' })).toBe(3);
    expect(sample(text, 'driving_load_lag_seconds_bucket', { le: '+Inf' })).toBe(3);
    expect(sample(text, 'driving_load_lag_seconds_sum')).toBeCloseTo(42.9);
    expect(sample(text, 'driving_load_lag_seconds_count')).toBe(3);
    expect(sample(text, 'driving_load_batches_total', { outcome: 'ok' })).toBe(1);
    expect(sample(text, 'driving_load_batches_total', { outcome: 'failed' })).toBe(1);
    expect(sample(text, 'driving_load_last_batch_timestamp_seconds')).toBe(1_000_000_200);
    expect(sample(text, 'driving_load_last_batch_duration_seconds')).toBe(0.25);
    expect(sample(text, 'driving_load_backlog_files')).toBe(4);
    expect(sample(text, 'driving_load_backlog_oldest_seconds')).toBe(0);
    expect(sample(text, 'driving_load_log_write_errors_total')).toBe(2);
    expect(sample(text, 'driving_load_watch_heartbeat_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(before));
    checkMetrics(text);
    // the count only grows, written again unchanged
    text = readFileSync(await metrics.write(dir), 'utf8');
    expect(sample(text, 'driving_load_log_write_errors_total')).toBe(2);
    // the lag's quantiles, by interpolation in the buckets: the median of 3 falls in (2, 3]
    expect(await metrics.lagQuantile(0.5)).toBeCloseTo(2.5);
    expect(metrics.batchCounts).toEqual({ ok: 1, failed: 1 });
    expect(readdirSync(dir)).toEqual(['driving_load_watch.prom']);
  });

  it('the watch writes it after a batch, promtool accepting it', async () => {
    const watched = await workspace('UTC');
    try {
      const dir = join(watched.dir, 'textfile');
      const passport = await PassportStore.open(watched.paths.passportFile);
      const users = await passport.ensureAccounts(watched.appId, ['driver-0']);
      passport.close();
      const trips = [0, 1].map((i) =>
        tripRecord({
          appId: watched.appId,
          tripId: `w-${i}`,
          userId: users.get('driver-0') as number,
          orgUserId: 'driver-0',
          start: `2026-11-20T0${i}:00:00Z`,
          seconds: 300,
        }),
      );
      writeNdjson(join(watched.paths.landingDir, 'partner.ndjson'), trips);
      const stop = new AbortController();
      const result: WatchResult = await runWatch({
        dataDir: watched.dir,
        metricsDir: dir,
        pollMs: 50,
        quietMs: 0,
        maxRestMs: 0,
        signal: stop.signal,
        onBatch: (batch) => {
          if ((batch.result?.totals.tripsLoaded ?? 0) > 0) stop.abort();
        },
      });
      const text = readFileSync(watchMetricsFile(dir), 'utf8');
      expect(sample(text, 'driving_load_batches_total', { outcome: 'ok' })).toBe(result.batches);
      expect(sample(text, 'driving_load_lag_seconds_count')).toBe(1);
      expect(sample(text, 'driving_load_backlog_files')).toBe(0);
      expect(result.lagP50Seconds).not.toBeNull();
      // the plain load's own file beside it, for the "late" alerts
      expect(sample(readFileSync(join(dir, 'driving_job_load.prom'), 'utf8'), 'driving_job_exit_status')).toBe(0);
      checkMetrics(text);
    } finally {
      watched.cleanup();
    }
  });
});
