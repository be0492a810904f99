// Hostile clients for the bench's abuse stage, in their own process so that their work does not
// count against the measurements the bench takes from its own. Given one JSON argument (the
// scenario), it runs until told to stop on its IPC channel (or until its connections are done),
// then prints what it saw as one JSON line.
import { connect, type Socket } from 'node:net';
import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';

export type AbuseScenario =
  | {
      kind: 'hostile';
      host: string;
      port: number;
      from: string;
      bodyClients: number;
      bodyBytes: number;
      tokenClients: number;
    }
  | { kind: 'flood'; host: string; port: number; from: string; connections: number }
  | { kind: 'idle'; host: string; port: number; from: string; connections: number };

export interface AbuseReport {
  /** Responses by status ('reset' and 'error:<code>' for connections that got none). */
  statuses: Record<string, number>;
  /** Large-body uploads answered before their whole body was sent. */
  answeredBeforeBodySent?: number;
  /** flood: milliseconds from connect to the answer, of the answered ones. */
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  /** idle: connections that opened, and of those how many the server had closed at the stop. */
  opened?: number;
  closedByServer?: number;
}

const count = (statuses: Record<string, number>, key: string): void => {
  statuses[key] = (statuses[key] ?? 0) + 1;
};
const errorKey = (error: NodeJS.ErrnoException): string =>
  error.code === 'ECONNRESET' ? 'reset' : `error:${error.code ?? error.message}`;

let stopping = false;
const stopped = new Promise<void>((resolve) => {
  process.on('message', (message: { stop?: boolean }) => {
    if (message.stop) {
      stopping = true;
      resolve();
    }
  });
});

/** One upload of `bodyBytes` with a made-up token, written as fast as the socket takes it. */
function largeUpload(s: Extract<AbuseScenario, { kind: 'hostile' }>, body: Buffer, report: AbuseReport): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: s.host, port: s.port, localAddress: s.from });
    let sent = 0;
    let answered = false;
    let head = '';
    const finish = (key: string): void => {
      if (answered) return;
      answered = true;
      count(report.statuses, key);
      if (key !== 'reset' && !key.startsWith('error') && sent < body.length)
        report.answeredBeforeBodySent = (report.answeredBeforeBodySent ?? 0) + 1;
      socket.destroy();
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (match) finish(match[1] as string);
    });
    socket.on('error', (error) => finish(errorKey(error)));
    socket.on('close', () => finish('reset'));
    socket.on('connect', () => {
      socket.write(
        `POST /v1/sdk/trips HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer pt_${randomBytes(24).toString('base64url')}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      const pump = (): void => {
        while (!answered && sent < body.length) {
          const chunk = body.subarray(sent, sent + 65_536);
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

/** Small uploads with random tokens over kept-alive connections, one after another. */
function randomTokens(
  s: Extract<AbuseScenario, { kind: 'hostile' }>,
  agent: Agent,
  report: AbuseReport,
): Promise<void> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: s.host,
        port: s.port,
        agent,
        method: 'POST',
        path: '/v1/sdk/trips',
        headers: {
          authorization: `Bearer pt_${randomBytes(24).toString('base64url')}`,
          'content-type': 'application/json',
        },
      },
      (res) => {
        count(report.statuses, String(res.statusCode));
        res.resume();
        res.on('end', resolve);
        res.on('error', () => resolve());
      },
    );
    req.on('error', (error) => {
      count(report.statuses, errorKey(error));
      resolve();
    });
    req.end('{}');
  });
}

/**
 * A JSON array of trip-like records with points, `bytes` long (padded with spaces): what a server
 * that reads before it authenticates has to parse.
 */
function tripsJson(bytes: number): Buffer {
  const points = Array.from({ length: 200 }, (_, i) => ({
    t: 1_700_000_000_000 + i * 1000,
    lat: 52.5 + i * 1e-4,
    lng: 13.4 + i * 1e-4,
    speed: 12.5,
  }));
  const records: string[] = [];
  let size = 2;
  for (let i = 0; ; i++) {
    const record = JSON.stringify({
      tripId: `t-${i}`,
      os: 'ios',
      startTime: 1_700_000_000_000,
      endTime: 1_700_000_200_000,
      points,
    });
    if (size + record.length + 1 > bytes) break;
    records.push(record);
    size += record.length + 1;
  }
  const text = `[${records.join(',')}]`;
  return Buffer.from(text.padEnd(bytes, ' '));
}

async function hostile(s: Extract<AbuseScenario, { kind: 'hostile' }>): Promise<AbuseReport> {
  const report: AbuseReport = { statuses: {}, answeredBeforeBodySent: 0 };
  const body = tripsJson(s.bodyBytes);
  const agent = new Agent({ keepAlive: true, maxSockets: s.tokenClients, localAddress: s.from });
  const loop = async (one: () => Promise<void>): Promise<void> => {
    while (!stopping) await one();
  };
  const loops = [
    ...Array.from({ length: s.bodyClients }, () => loop(() => largeUpload(s, body, report))),
    ...Array.from({ length: s.tokenClients }, () => loop(() => randomTokens(s, agent, report))),
  ];
  await stopped;
  await Promise.all(loops);
  agent.destroy();
  return report;
}

/** `connections` at once, each sending one request for /healthz and waiting for its answer. */
async function flood(s: Extract<AbuseScenario, { kind: 'flood' }>): Promise<AbuseReport> {
  const report: AbuseReport = { statuses: {} };
  const times: number[] = [];
  await Promise.all(
    Array.from(
      { length: s.connections },
      () =>
        new Promise<void>((resolve) => {
          const started = performance.now();
          const socket = connect({ host: s.host, port: s.port, localAddress: s.from });
          let done = false;
          const finish = (key: string): void => {
            if (done) return;
            done = true;
            count(report.statuses, key);
            if (/^\d{3}$/.test(key)) times.push(performance.now() - started);
            socket.destroy();
            resolve();
          };
          socket.setTimeout(120_000, () => finish('timeout'));
          socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n'));
          socket.on('data', (chunk: Buffer) => {
            const match = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'));
            if (match) finish(match[1] as string);
          });
          socket.on('error', (error) => finish(errorKey(error)));
          socket.on('close', () => finish('reset'));
        }),
    ),
  );
  times.sort((a, b) => a - b);
  const at = (q: number): number =>
    Math.round((times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN) * 10) / 10;
  return { ...report, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}

/** `connections` opened and left silent until the stop. */
async function idle(s: Extract<AbuseScenario, { kind: 'idle' }>): Promise<AbuseReport> {
  const report: AbuseReport = { statuses: {}, opened: 0, closedByServer: 0 };
  const sockets: Socket[] = [];
  // opened in batches, as a client that keeps opening would
  for (let i = 0; i < s.connections && !stopping; i += 500) {
    await Promise.all(
      Array.from(
        { length: Math.min(500, s.connections - i) },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect({ host: s.host, port: s.port, localAddress: s.from });
            socket.once('connect', () => {
              report.opened = (report.opened ?? 0) + 1;
              sockets.push(socket);
              socket.once('close', () => {
                if (!stopping) report.closedByServer = (report.closedByServer ?? 0) + 1;
              });
              resolve();
            });
            socket.once('error', (error) => {
              count(report.statuses, errorKey(error));
              resolve();
            });
          }),
      ),
    );
  }
  process.send?.({ opened: report.opened });
  await stopped;
  for (const socket of sockets) socket.destroy();
  return report;
}

const scenario = JSON.parse(process.argv[2] ?? '{}') as AbuseScenario;
const run =
  scenario.kind === 'hostile' ? hostile(scenario) : scenario.kind === 'flood' ? flood(scenario) : idle(scenario);
const report = await run;
process.stdout.write(`${JSON.stringify(report)}\n`);
process.disconnect?.();
