import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../src/apps/store.js';
import { readFollowStatus } from '../src/follow/status.js';
import { closeUploadQueues } from '../src/intake/upload-queue.js';
import { closeStates } from '../src/state/open.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { startApiServer, type ApiServer } from './api-server.js';
import { startNodeChild } from './child.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { ensureBase } from './fixtures.js';
import { tripTemplates } from './watch-stage.js';
import { UploadMaker, issueTokens, quantile } from './watch-uploads.js';
import { MachinesRun } from './machines-uploads.js';

/** Uploads a second and how many, per run (the demo's rate, then a 100,000-driver day's peak rate). */
const RUNS: Readonly<Record<'small' | 'full', { rate: number; uploads: number }[]>> = {
  small: [
    { rate: 1, uploads: 20 },
    { rate: 10, uploads: 100 },
  ],
  full: [
    { rate: 1, uploads: 60 },
    { rate: 10, uploads: 600 },
  ],
};
const DRIVERS = 50;

/**
 * Several machines on this host, each a data folder of its own, sharing a PostgreSQL of the bench's
 * own (test/helpers/postgres.ts): a job machine (`load.js --watch`) and two API machines
 * (`serve.js --follow` the job machine's folder, a local path). One-trip uploads go to the API
 * machines in turn, as HAProxy's round robin sends them; each upload's time runs from its 202 to
 * the moment both API machines answer its trip: committed in PostgreSQL, taken in by the job
 * machine's watch, loaded, published and copied to each machine. At the demo's rate and at 10
 * uploads a second; and the file data each API machine's follower copied per publish meanwhile.
 */
export async function benchMachines(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const templates = (await tripTemplates(ctx)).whole;
  const users = base.users.slice(0, DRIVERS).map((u) => u.orgUserId);
  const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `machines-${Date.now().toString(36)}`);
  const pg = await startPostgres();
  const root = join(ctx.options.workDir, 'machines');
  const [jobDir, dirA, dirB] = ['job', 'api-a', 'api-b'].map((n) => join(root, n)) as [string, string, string];
  for (const dir of [jobDir, dirA, dirB]) mkdirSync(dir, { recursive: true });
  const servers: ApiServer[] = [];
  let watch: ReturnType<typeof startNodeChild> | null = null;
  try {
    const url = await pg.database();
    const env = { DATABASE_URL: url, DRIVING_API_RATE_PER_TOKEN: '100000', DRIVING_FOLLOW_POLL: '1s' };
    const app = await new AppStore({ dataDir: jobDir, databaseUrl: url }).add({
      name: 'Bench Machines',
      timeZone: base.timeZone,
    });
    await closeStates();
    watch = startNodeChild('load --watch (job machine)', jobScript(ctx, 'load'), ['--data-dir', jobDir, '--watch'], {
      ...childOptions(ctx, false),
      env,
    });
    for (const dir of [dirA, dirB])
      servers.push(await startApiServer(ctx, dir, { workers: 1, env, args: ['--no-metrics', '--follow', jobDir] }));
    const [a, b] = servers as [ApiServer, ApiServer];
    await waitReady([a.url, b.url]);
    const tokens = await issueTokens(a.url, app.apiKey, users);
    for (const { rate, uploads } of RUNS[ctx.options.size]) {
      ctx.progress(`bench: machines: ${uploads} uploads at ${rate}/s through two API machines in turn`);
      const copiesBefore = [dirA, dirB].map((d) => readFollowStatus(d)?.copies ?? 0);
      const run = new MachinesRun([a.url, b.url], app.apiKey, tokens);
      await run.send(() => maker.make(templates, users), rate, uploads);
      const lags = await run.finish();
      const copied = [dirA, dirB].map((d, i) => (readFollowStatus(d)?.copies ?? 0) - (copiesBefore[i] ?? 0));
      const s = (q: number) => ((quantile(lags.lagsMs, q) ?? Number.NaN) / 1000).toFixed(2);
      record(ctx, {
        stage: 'machines',
        metric: `upload through either of 2 API machines to its trip served by both, ${rate} upload(s)/s, ${uploads} uploads (PostgreSQL, watch, rsync copy; ${lags.failed} failed, ${lags.unserved} unserved): p50 / p99`,
        value: `${s(0.5)} / ${s(0.99)}`,
        unit: 's',
        doc: true,
      });
      record(ctx, {
        stage: 'machines',
        metric: `${rate} upload(s)/s: publishes each API machine copied meanwhile`,
        value: copied.join(' / '),
        unit: 'copies',
      });
      const last = readFollowStatus(dirA)?.lastCopy;
      if (last)
        record(ctx, {
          stage: 'machines',
          metric: `${rate} upload(s)/s: file data the last publish copied to an API machine (rsync literal / wire)`,
          value: `${(last.literalBytes / 1024).toFixed(1)} / ${(last.wireBytes / 1024).toFixed(1)}`,
          unit: 'KiB',
          doc: true,
        });
    }
  } finally {
    for (const s of servers) ctx.children.push(await s.stop());
    if (watch) {
      watch.child.kill('SIGTERM');
      ctx.children.push(await watch.done);
    }
    await closeUploadQueues();
    await closeStates();
    await pg.stop();
    if (!ctx.options.keep) rmSync(root, { recursive: true, force: true });
  }
}

/** Until every API machine has copied the job machine's first publish. */
async function waitReady(urls: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ready = await Promise.all(
      urls.map((u) =>
        fetch(`${u}/readyz`)
          .then(async (r) => {
            await r.arrayBuffer();
            return r.status === 200;
          })
          .catch(() => false),
      ),
    );
    if (ready.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error('the API machines copied no snapshot within 120 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}
