import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { readFollowStatus, type FollowStatus } from '../src/follow/status.js';
import { readManifest } from '../src/publish/manifest.js';
import { addDays } from '../src/time.js';
import { startApiServer } from './api-server.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { runNodeChild } from './child.js';
import { dropDataDir, historyDir, newDataDir } from './fixtures.js';
import { UploadMaker, quantile } from './watch-uploads.js';
import { tripTemplates } from './watch-stage.js';

const HISTORY_DAYS = 7;
/** Publishes measured: each a load of a few new trips on the job machine. */
const PUBLISHES = 6;
const TRIPS_A_PUBLISH = 10;

/**
 * An API machine following a job machine (serve.js --follow, a local path: both folders on this
 * disk, so what is measured is rsync's work and the switch, not a network): the job machine holds
 * `HISTORY_DAYS` days of published history; the API machine copies it whole once, then each of
 * `PUBLISHES` loads of `TRIPS_A_PUBLISH` new trips. Per publish: the bytes copied (rsync's literal
 * file data, and the wire both ways) against the size of what the manifest names, and the time
 * from the job machine's manifest switch to the API machine's /readyz saying that version, at the
 * default poll of the follower (DRIVING_FOLLOW_POLL, 1 s).
 */
export async function benchFollow(ctx: BenchContext): Promise<void> {
  const history = await historyDir(ctx, 'follow-job', HISTORY_DAYS, addDays(ctx.day, -1));
  const apiDir = await newDataDir(ctx, 'follow-api');
  const base = ctx.base as NonNullable<BenchContext['base']>;
  const templates = (await tripTemplates(ctx)).whole;
  const users = base.users.slice(0, 50).map((u) => u.orgUserId);
  const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `follow-${Date.now().toString(36)}`);
  const jobPaths = pathsFor(history.dir);
  const server = await startApiServer(ctx, apiDir, { workers: 1, args: ['--no-metrics', '--follow', history.dir] });
  try {
    const first = readFollowStatus(apiDir)?.lastCopy;
    if (!first) throw new Error('the API machine serves without a copy recorded');
    record(ctx, {
      stage: 'follow',
      metric: `first copy of the job machine's snapshot (${HISTORY_DAYS} days): file data copied`,
      value: Number((first.literalBytes / 2 ** 20).toFixed(1)),
      unit: 'MiB',
      doc: true,
    });
    const incoming = join(ctx.options.workDir, 'follow-incoming');
    mkdirSync(incoming, { recursive: true });
    const literal: number[] = [];
    const wire: number[] = [];
    const named: number[] = [];
    const lagsMs: number[] = [];
    for (let i = 1; i <= PUBLISHES; i++) {
      const file = join(incoming, `publish-${i}.ndjson`);
      const lines = Array.from({ length: TRIPS_A_PUBLISH }, () => maker.make(templates, users).body);
      writeFileSync(file, `${lines.join('\n')}\n`);
      const before = readManifest(jobPaths.manifestFile)?.version ?? 0;
      // the switch on the job machine, seen by polling its manifest while the load runs
      let switchedAt = 0;
      const watch = setInterval(() => {
        if (switchedAt === 0 && (readManifest(jobPaths.manifestFile)?.version ?? 0) > before)
          switchedAt = performance.now();
      }, 5);
      const run = await runNodeChild(
        'load (a publish to follow)',
        jobScript(ctx, 'load'),
        ['--data-dir', history.dir, '--input', file, '--json'],
        childOptions(ctx, false),
      );
      clearInterval(watch);
      ctx.children.push(run);
      if (run.exitCode !== 0) throw new Error(`load.js exited ${run.exitCode}`);
      const version = readManifest(jobPaths.manifestFile)?.version ?? 0;
      if (switchedAt === 0) switchedAt = performance.now();
      const deadline = Date.now() + 120_000;
      for (;;) {
        const res = await fetch(`${server.url}/readyz`);
        if (res.status === 200 && ((await res.json()) as { version: number }).version === version) break;
        if (Date.now() > deadline) throw new Error(`the API machine did not serve version ${version} within 120 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
      lagsMs.push(performance.now() - switchedAt);
      const copy = (readFollowStatus(apiDir) as FollowStatus).lastCopy;
      if (copy?.version !== version) throw new Error(`the follower's last copy is not version ${version}`);
      literal.push(copy.literalBytes);
      wire.push(copy.wireBytes);
      named.push(namedBytes(history.dir));
    }
    const median = (values: number[]) => quantile(values, 0.5) ?? 0;
    const kib = (bytes: number) => Number((bytes / 1024).toFixed(1));
    record(ctx, {
      stage: 'follow',
      metric: `a publish of ${TRIPS_A_PUBLISH} new trips: file data copied (median of ${PUBLISHES}; the snapshot it names: ${(median(named) / 2 ** 20).toFixed(1)} MiB)`,
      value: kib(median(literal)),
      unit: 'KiB',
      doc: true,
    });
    record(ctx, {
      stage: 'follow',
      metric: `a publish of ${TRIPS_A_PUBLISH} new trips: bytes on the wire both ways (median of ${PUBLISHES})`,
      value: kib(median(wire)),
      unit: 'KiB',
      doc: true,
    });
    record(ctx, {
      stage: 'follow',
      metric: `job machine's publish to the API machine serving it, poll 1 s (p50 / max of ${PUBLISHES})`,
      value: `${((quantile(lagsMs, 0.5) ?? 0) / 1000).toFixed(2)} / ${(Math.max(...lagsMs) / 1000).toFixed(2)}`,
      unit: 's',
      doc: true,
    });
    if (!ctx.options.keep) rmSync(incoming, { recursive: true, force: true });
  } finally {
    ctx.children.push(await server.stop());
    dropDataDir(ctx, apiDir);
    dropDataDir(ctx, history.dir);
  }
}

/** Bytes of the files the job machine's manifest names (its slot and serving pack). */
function namedBytes(dataDir: string): number {
  const paths = pathsFor(dataDir);
  const manifest = JSON.parse(readFileSync(paths.manifestFile, 'utf8')) as {
    file: string;
    pack?: { files: Record<string, string[]> };
  };
  const names = [
    manifest.file,
    ...Object.values(manifest.pack?.files ?? {})
      .flat()
      .flatMap((n) => [n, `${n}.extras`]),
  ];
  let total = 0;
  for (const name of names) {
    try {
      total += statSync(join(paths.publishedDir, name)).size;
    } catch {
      // removed by a later publish meanwhile: not counted
    }
  }
  return total;
}
