// The api stage's load generator, run as its OWN process (`node dist/bench/load-generator.js
// CONFIG.json`) so its CPU is not the server's or the bench's. Prints one JSON result on stdout.
// With `seconds: 0` it runs until the parent sends {stop: true} over IPC (the publish run lasts as
// long as the publish).
//
// Pacing: autocannon's `overallRate` alone is not a steady rate. Every connection sends its share
// of the second's requests back to back as soon as its one-second tick starts, so all of a
// second's requests arrive in the first ~100 ms (measured: 200 req/s over 10 connections came as
// 200 requests in 100 ms, then 900 ms of silence), and latency then measures a burst of
// `connections` concurrent requests instead of the rate asked for. So this runs `connections`
// autocannon instances of one connection each, started 1000/connections ms apart, each at its
// share of the rate: the ticks are spread over the second and arrivals are close to uniform.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadGeneratorConfig {
  url: string;
  apiKey: string;
  paths: string[];
  rate: number;
  seconds: number;
  connections: number;
}

export interface LoadGeneratorResult {
  requests: number;
  seconds: number;
  /** Responses per second over the run. */
  throughput: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

const config = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as LoadGeneratorConfig;
const latencies: number[] = [];
let next = 0;
const instances: autocannon.Instance[] = [];
const results: Promise<autocannon.Result>[] = [];
const timers: NodeJS.Timeout[] = [];
let stopped = false;
const started = performance.now();

const count = Math.max(1, Math.min(config.connections, config.rate));
for (let k = 0; k < count; k++) {
  // the rate split over the instances, the remainder going to the first ones
  const rate = Math.floor(config.rate / count) + (k < config.rate % count ? 1 : 0);
  timers.push(setTimeout(() => {
    if (stopped) return;
    const instance = autocannon({
      url: config.url,
      connections: 1,
      overallRate: rate,
      duration: config.seconds > 0 ? config.seconds : 3600,
      headers: { authorization: `Bearer ${config.apiKey}` },
      // autocannon's coordinated-omission correction assumes a request every ceil(1/rate) ms and
      // invents samples in between; the exact latencies are kept below instead
      ignoreCoordinatedOmission: true,
      requests: [
        {
          setupRequest: (request: Record<string, unknown>) => {
            request['path'] = config.paths[next++ % config.paths.length];
            return request;
          },
        },
      ],
    });
    // autocannon's own histogram is in whole milliseconds; the response event has the exact time
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
    });
    instances.push(instance);
    results.push(Promise.resolve(instance));
  }, (k * 1000) / count));
}

function stop(): void {
  stopped = true;
  for (const timer of timers) clearTimeout(timer);
  for (const instance of instances) instance.stop();
}

process.on('message', (message: { stop?: boolean }) => {
  if (message.stop) stop();
});

// every instance runs `seconds` from its own start; wait for the last one
const runSeconds = config.seconds > 0 ? config.seconds : Infinity;
await new Promise<void>((resolve) => {
  const poll = setInterval(() => {
    if (stopped || (instances.length === count && (performance.now() - started) / 1000 > runSeconds + 1.5)) {
      clearInterval(poll);
      resolve();
    }
  }, 50);
});
const elapsed = config.seconds > 0 ? config.seconds : (performance.now() - started) / 1000;
stop();
const all = await Promise.all(results);
latencies.sort((a, b) => a - b);
const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
const statusCodes: Record<string, number> = {};
for (const result of all) {
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + stat.count;
}
const sum = (f: (r: autocannon.Result) => number): number => all.reduce((total, r) => total + f(r), 0);
const out: LoadGeneratorResult = {
  requests: latencies.length,
  seconds: elapsed,
  throughput: latencies.length / elapsed,
  p50Ms: at(0.5),
  p90Ms: at(0.9),
  p99Ms: at(0.99),
  maxMs: latencies[latencies.length - 1] ?? 0,
  errors: sum((r) => r.errors),
  timeouts: sum((r) => r.timeouts),
  non2xx: sum((r) => r.non2xx),
  statusCodes,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
