// The api stage's load generator, run as its OWN process (`node dist/bench/load-generator.js
// CONFIG.json`) so its CPU is not the server's or the bench's. Prints one JSON result on stdout.
// With `seconds: 0` it runs until the parent sends {stop: true} over IPC (the publish run lasts as
// long as the publish).
//
// The first `warmupSeconds` run at the same rate, but their latencies are not counted (their
// failures are): a freshly started generator and a code path the server has not optimised yet
// stall in the first second, which is start-up, not the steady state measured.
//
// Open loop, as wrk2 does it: request i is due at start + i/rate and is sent then, whether or not
// earlier ones have been answered, and its latency is counted from when it was DUE. A server that
// stalls for 150 ms therefore shows 150 ms latencies for every request due during the stall,
// instead of the stall hiding behind requests that were never sent (coordinated omission: a
// closed-loop tool such as autocannon with one request per connection in flight reports such a
// stall as a small p99). Requests still unanswered when the run ends are
// waited for (up to 10 s) and then counted as failed, never dropped.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import { RawHttpPool } from './raw-http-client.js';

export interface LoadGeneratorConfig {
  url: string;
  apiKey: string;
  paths: string[];
  rate: number;
  seconds: number;
  /** Sockets kept open to the server (requests beyond that wait for one, their latency still counted from when they were due). */
  connections: number;
  /** How long requests still in flight at the end are waited for before they count as failed (default 10 s). */
  graceMs?: number;
  /** Seconds sent at the rate before the measured run, whose latencies are not counted (default 0). */
  warmupSeconds?: number;
  /**
   * undici (default), or `net`: bench/raw-http-client.ts, the same requests and the same latency
   * (due time to the response's last byte) for a fraction of the CPU, where the generator's CPU is
   * taken from the server it measures (the workers stage).
   */
  client?: 'undici' | 'net';
}

export interface LoadGeneratorResult {
  /** Requests due and sent in the run. */
  sent: number;
  /** Requests answered with any status, warm-up included. */
  requests: number;
  /** Requests due after the warm-up and answered: the latencies' count. */
  measured: number;
  /** From the first measured request's due time to the last answer. */
  seconds: number;
  /** Measured answers per second over `seconds`. */
  throughput: number;
  /** From the first request (warm-up included) to the last answer: what the generator's CPU is shared over. */
  totalSeconds: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Network errors and requests without an answer 10 s after the run ended. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** The generator's own event-loop delay, p99: when it is high, the generator (not the server) added latency. */
  loopDelayP99Ms: number;
  /** The generator's CPU from its first request to its last answer (its own start left out). */
  cpuSecondsSending: number;
  /** Failed requests by kind: the network error's code (ECONNRESET, UND_ERR_SOCKET, ...) or `HTTP <status>`. */
  failureKinds: Record<string, number>;
  /** The first MAX_FAILURES_LISTED failed requests: kind, path, and when (epoch ms) each was sent and failed. */
  failures: FailedRequest[];
  /** Moments the parent marked over IPC (`{mark: name}`, e.g. a kill): when, and how many requests were in flight then. */
  marks: Record<string, { at: number; inFlight: number }>;
}

export interface FailedRequest {
  kind: string;
  path: string;
  sentAt: number;
  failedAt: number;
}

const MAX_FAILURES_LISTED = 1_000;

const config = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as LoadGeneratorConfig;
const latencies: number[] = [];
const statusCodes: Record<string, number> = {};
let sent = 0;
let errors = 0;
let non2xx = 0;
let inFlight = 0;
let lastAnswer = 0;
let answered = 0;
let stopped = false;
const failureKinds: Record<string, number> = {};
const failures: FailedRequest[] = [];
const marks: Record<string, { at: number; inFlight: number }> = {};
/** Wall-clock time (epoch ms), comparable with the parent's Date.now() for a kill it marks. */
const epochMs = (): number => performance.timeOrigin + performance.now();
const fail = (kind: string, path: string, sentAt: number): void => {
  failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
  if (failures.length < MAX_FAILURES_LISTED) failures.push({ kind, path, sentAt, failedAt: epochMs() });
};
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const started = performance.now();
// the CPU of sending and reading alone: the process's start (Node, its modules) is not the requests'
const cpuAtStart = process.cpuUsage();
const measureFrom = started + (config.warmupSeconds ?? 0) * 1000;
const intervalMs = 1000 / config.rate;

// undici's dispatcher, not node:http: http.request costs the generator more CPU, and on cores it
// shares with the server that is CPU taken from the server it measures
const headers = { authorization: `Bearer ${config.apiKey}` };
const pool =
  config.client === 'net'
    ? null
    : new Pool(config.url, { connections: config.connections, pipelining: 1, keepAliveTimeout: 60_000 });
const raw = config.client === 'net' ? new RawHttpPool(config.url, config.connections, headers) : null;

function fire(dueAt: number): void {
  const path = config.paths[sent % config.paths.length] as string;
  sent++;
  inFlight++;
  const sentAt = epochMs();
  const complete = (status: number): void => {
    inFlight--;
    answered++;
    lastAnswer = performance.now();
    if (dueAt >= measureFrom) latencies.push(lastAnswer - dueAt);
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status < 200 || status >= 300) {
      non2xx++;
      fail(`HTTP ${status}`, path, sentAt);
    }
  };
  const error = (kind: string): void => {
    inFlight--;
    errors++;
    fail(kind, path, sentAt);
  };
  if (raw) {
    raw.get(path, { onComplete: complete, onError: error });
    return;
  }
  let status = 0;
  // the dispatcher's low-level handler: no response object, no stream, the body is dropped
  const handler = {
    onConnect() {},
    onHeaders(statusCode: number) {
      status = statusCode;
      return true;
    },
    onData() {
      return true;
    },
    onComplete: () => complete(status),
    onError: (e: Error & { code?: string }) => error(e.code ?? e.name),
  } as unknown as Dispatcher.DispatchHandler;
  pool?.dispatch({ origin: config.url, path, method: 'GET', headers }, handler);
}

// a timer per millisecond tick sends every request that has come due since the last tick
const endAt = config.seconds > 0 ? measureFrom + config.seconds * 1000 : Infinity;
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const now = performance.now();
    const until = Math.min(now, endAt);
    while (!stopped && started + sent * intervalMs <= until) fire(started + sent * intervalMs);
    if (stopped || now >= endAt) {
      clearInterval(tick);
      resolve();
    }
  }, 1);
  process.on('message', (message: { stop?: boolean; mark?: string }) => {
    if (message.stop) stopped = true;
    if (message.mark) marks[message.mark] = { at: epochMs(), inFlight };
  });
});
// what was sent must be answered or counted as failed
const graceEnd = performance.now() + (config.graceMs ?? 10_000);
while (inFlight > 0 && performance.now() < graceEnd) await new Promise((r) => setTimeout(r, 20));
const timeouts = inFlight;
if (timeouts > 0) failureKinds['unanswered'] = timeouts;
const cpu = process.cpuUsage(cpuAtStart);
latencies.sort((a, b) => a - b);
const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
const seconds = Math.max((lastAnswer || performance.now()) - measureFrom, 1) / 1000;
const out: LoadGeneratorResult = {
  sent,
  requests: answered,
  measured: latencies.length,
  totalSeconds: Math.max((lastAnswer || performance.now()) - started, 1) / 1000,
  seconds,
  throughput: latencies.length / seconds,
  p50Ms: at(0.5),
  p90Ms: at(0.9),
  p99Ms: at(0.99),
  maxMs: latencies[latencies.length - 1] ?? 0,
  errors,
  timeouts,
  non2xx,
  statusCodes,
  loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
  cpuSecondsSending: (cpu.user + cpu.system) / 1e6,
  failureKinds,
  failures,
  marks,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
