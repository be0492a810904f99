import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppStore } from '../src/apps/store.js';
import { pathsFor } from '../src/data-folder.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild, startNodeChild } from './child.js';
import { startApiServer } from './api-server.js';
import type { AbuseReport, AbuseScenario } from './abuse-clients.js';
import { abuseProbes } from './abuse-probes.js';
import { HttpClient, sampleWhile, type Samples } from './abuse-http.js';

const CLIENTS = fileURLToPath(new URL('./abuse-clients.js', import.meta.url));
/** Where each party connects from: the server limits per address, as it would per client. */
export const ADDRESSES = {
  measure: '127.0.0.1',
  hostile: '127.0.0.2',
  flood: '127.0.0.3',
  idle: '127.0.0.4',
  probe: '127.0.0.5',
} as const;
/** The large body of the report: 4.6 MB, sent with a made-up token. */
const BODY_BYTES = 4_600_000;

/**
 * Abuse: the real `serve.js` (of this checkout, or of `--serve-from`, to compare with the code
 * before a change) over a small published data folder. `/healthz` and token issuing are timed from
 * one address while idle, while 8 clients post 4.6 MB bodies and 64 send random tokens from
 * another, during a flood of concurrent connections and while idle connections are held; then
 * how malformed, oversized and out-of-range requests are answered.
 */
export async function benchAbuse(ctx: BenchContext): Promise<void> {
  const { abuseSeconds: seconds, abuseFlood, abuseIdle } = ctx.options.sizes;
  const serveFrom = ctx.options.serveFrom ?? ctx.repoDir;
  const label = `server ${commitOf(serveFrom)}`;
  const dir = join(ctx.options.workDir, 'abuse');
  const { appId, apiKey } = await new AppStore(pathsFor(dir).appsFile).add({ name: 'abuse bench', timeZone: 'UTC' });
  // a few generated users' days, loaded and published by the real jobs: the probes page through them
  jobJson(
    await runNodeChild(
      'generate (abuse)',
      jobScript(ctx, 'generate'),
      ['--data-dir', dir, '--users', '3', '--days', '5', '--json'],
      childOptions(ctx),
    ),
  );
  jobJson(await runNodeChild('load (abuse)', jobScript(ctx, 'load'), ['--data-dir', dir, '--json'], childOptions(ctx)));
  const server = await startApiServer(ctx, dir, { repoDir: serveFrom });
  const { hostname, port } = new URL(server.url);
  const client = new HttpClient(server.url, ADDRESSES.measure);
  const timings = (what: string, s: Samples, target?: string): void => {
    record(ctx, {
      stage: 'abuse',
      metric: `${label}: ${what}: p50 / p99 / max / failed`,
      value: `${s.p50Ms} / ${s.p99Ms} / ${s.maxMs} ms / ${s.failed} of ${s.count}`,
      unit: '',
      ...(target ? { target } : {}),
    });
  };
  const measure = (stop: Promise<unknown>) =>
    Promise.all([
      sampleWhile(stop, () => client.call('GET', '/healthz')),
      sampleWhile(stop, () =>
        client.call('POST', `/v1/org-user/bench-${Math.floor(Math.random() * 1000)}/token`, {
          authorization: `Bearer ${apiKey}`,
        }),
      ),
    ]);
  try {
    const [idleHealth, idleToken] = await measure(sleep(seconds * 1000));
    timings('idle: GET /healthz', idleHealth);
    timings('idle: token issuing', idleToken);

    const hostile = startClients(ctx, {
      kind: 'hostile',
      host: hostname,
      port: Number(port),
      from: ADDRESSES.hostile,
      bodyClients: 8,
      bodyBytes: BODY_BYTES,
      tokenClients: 64,
    });
    await sleep(1_000);
    const [busyHealth, busyToken] = await measure(sleep(seconds * 1000));
    const hostileReport = await hostile.stop();
    timings('8 clients posting 4.6 MB bodies and 64 sending random tokens: GET /healthz', busyHealth);
    timings('the same: token issuing', busyToken);
    record(ctx, {
      stage: 'abuse',
      metric: `${label}: what the hostile clients got (status: count); large uploads answered before their body was all sent`,
      value: `${statusLine(hostileReport)}; ${hostileReport.answeredBeforeBodySent ?? 0}`,
      unit: '',
    });

    const flood = startClients(ctx, {
      kind: 'flood',
      host: hostname,
      port: Number(port),
      from: ADDRESSES.flood,
      connections: abuseFlood,
    });
    const [floodHealth] = await measure(flood.done);
    const floodReport = await flood.done;
    timings(
      `${abuseFlood.toLocaleString('en-US')} concurrent connections from one address: GET /healthz from another`,
      floodHealth,
    );
    record(ctx, {
      stage: 'abuse',
      metric: `${label}: the ${abuseFlood.toLocaleString('en-US')} connections: answers (status: count) / p50 / p99 / max of those answered`,
      value: `${statusLine(floodReport)} / ${floodReport.p50Ms} / ${floodReport.p99Ms} / ${floodReport.maxMs} ms`,
      unit: '',
    });

    const idle = startClients(ctx, {
      kind: 'idle',
      host: hostname,
      port: Number(port),
      from: ADDRESSES.idle,
      connections: abuseIdle,
    });
    await idle.opened;
    const [heldHealth] = await measure(sleep(Math.min(seconds, 3) * 1000));
    const idleReport = await idle.stop();
    timings(
      `${abuseIdle.toLocaleString('en-US')} idle connections opened by one address: GET /healthz from another`,
      heldHealth,
    );
    record(ctx, {
      stage: 'abuse',
      metric: `${label}: the idle connections: opened / closed by the server while held / refused (error: count)`,
      value: `${idleReport.opened} / ${idleReport.closedByServer} / ${statusLine(idleReport) || 'none'}`,
      unit: '',
    });

    for (const probe of await abuseProbes({
      url: server.url,
      from: ADDRESSES.probe,
      apiKey,
      appId,
      dataDir: dir,
      repoDir: serveFrom,
    })) {
      record(ctx, { stage: 'abuse', metric: `${label}: ${probe.name}`, value: probe.outcome, unit: '' });
    }
  } finally {
    client.close();
    ctx.children.push(await server.stop());
  }
}

interface RunningClients {
  opened: Promise<void>;
  done: Promise<AbuseReport>;
  stop(): Promise<AbuseReport>;
}

function startClients(ctx: BenchContext, scenario: AbuseScenario): RunningClients {
  const running = startNodeChild(`abuse ${scenario.kind}`, CLIENTS, [JSON.stringify(scenario)], {
    ...childOptions(ctx),
    ipc: true,
  });
  const opened = new Promise<void>((resolve) => running.child.once('message', () => resolve()));
  const done = running.done.then((r) => {
    if (r.exitCode !== 0)
      throw new Error(`abuse clients (${scenario.kind}) exited ${r.exitCode}: ${r.stderrTail.slice(-3).join(' | ')}`);
    ctx.children.push(r);
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as AbuseReport;
  });
  return {
    opened,
    done,
    stop: () => {
      if (running.child.connected) running.child.send({ stop: true });
      return done;
    },
  };
}

const statusLine = (r: AbuseReport): string =>
  Object.entries(r.statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`)
    .join(', ');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return dir;
  }
}
