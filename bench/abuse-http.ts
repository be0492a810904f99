import { Agent, request } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Requests from one local address over kept-alive connections (the bench's well-behaved client). */
export class HttpClient {
  private readonly agent: Agent;
  private readonly base: URL;

  constructor(url: string, from: string) {
    this.base = new URL(url);
    this.agent = new Agent({ keepAlive: true, maxSockets: 8, localAddress: from });
  }

  call(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: this.base.hostname, port: this.base.port, agent: this.agent, method, path, headers, timeout: 30_000 },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface Samples {
  count: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Calls `one` again and again, each after the last was answered, until `stop` settles; a call
 * that is not a 200 (or gets no answer) counts as failed. Latencies of all calls, in ms.
 */
export async function sampleWhile(stop: Promise<unknown>, one: () => Promise<Answer>): Promise<Samples> {
  let stopped = false;
  void stop.then(
    () => (stopped = true),
    () => (stopped = true),
  );
  const times: number[] = [];
  let failed = 0;
  while (!stopped) {
    const started = performance.now();
    const ok = await one().then(
      (a) => a.status === 200,
      () => false,
    );
    times.push(performance.now() - started);
    if (!ok) failed += 1;
  }
  times.sort((a, b) => a - b);
  const at = (q: number): number =>
    Math.round((times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN) * 10) / 10;
  return { count: times.length, failed, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}
