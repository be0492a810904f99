import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { readManifest } from '../src/publish/manifest.js';
import { addDays } from '../src/time.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild, startNodeChild, type ChildResult } from './child.js';
import { dropDataDir, ensureDayFiles, mib as mebi, newDataDir } from './fixtures.js';
import { startCluster } from './cluster-server.js';
import { tripTemplates } from './watch-stage.js';
import { UploadMaker, UploadRun, issueTokens, quantile } from './watch-uploads.js';

/** Target (the bar): SDK uploads beside a partner's day file served within this. */
export const SLICES_MAX_LAG_S = 15;
const UPLOADS_PER_S = 1;
const UPLOAD_DRIVERS = 20;
/** When score.js is started beside the partner file's batches, after the file was dropped. */
const SCORE_AFTER_MS = 5_000;

/**
 * SDK uploads beside a partner's day file: `load.js --watch` and `serve.js` (2 workers) on a fresh
 * folder; the day of every driver of the run's size (small: 2,000, full: 100,000) dropped into the
 * landing area as one NDJSON file while drivers upload one trip a second through the API, each
 * asked for until it is served. The upload-to-served lag (p50, p99, max) while the file loads a
 * slice a batch, and the file's own time to its last trip served; then the day sent again, and
 * score.js started beside its slices. Once per `--slice-mib` value (DRIVING_LOAD_SLICE_BYTES;
 * 0: the file loaded whole, as before slices), each figure named by it.
 */
export async function benchSlices(ctx: BenchContext): Promise<void> {
  for (const mib of ctx.options.sliceMib) await sliceRun(ctx, mib);
}

/** One run of the stage with DRIVING_LOAD_SLICE_BYTES at `mib` MiB (0: the file loaded whole); its figures are named by it. */
async function sliceRun(ctx: BenchContext, mib: number): Promise<void> {
  const day = await ensureDayFiles(ctx, 'ndjson');
  const dir = await newDataDir(ctx, `slices-${mib}`);
  const base = ctx.base as NonNullable<BenchContext['base']>;
  const paths = pathsFor(dir);
  mkdirSync(paths.landingDir, { recursive: true });
  const templates = await tripTemplates(ctx);
  const uploadUsers = base.users.slice(0, UPLOAD_DRIVERS).map((u) => u.orgUserId);
  // the uploads are trips of day D - 1: the partner's file holds day D of every driver
  const maker = new UploadMaker(Date.parse(`${addDays(ctx.day, -1)}T00:00:00Z`), `slices-${Date.now().toString(36)}`);
  const env = { DRIVING_LOAD_SLICE_BYTES: String(mib * 2 ** 20) };
  const variant = `--slice-mib ${mib}`;
  const watcher = startNodeChild(
    'load --watch (slices)',
    jobScript(ctx, 'load'),
    ['--data-dir', dir, '--watch', '--json'],
    { ...childOptions(ctx, false), env },
  );
  let watcherDone: ChildResult | null = null;
  try {
    // the first batch publishes the empty folder, which the API needs to start
    await waitFor(() => readManifest(paths.manifestFile) !== null, 120_000, 'the first publish');
    const server = await startCluster(ctx, dir, 2, { env: { DRIVING_API_RATE_PER_TOKEN: '100000' } });
    try {
      const tokens = await issueTokens(server.url, base.apiKey, uploadUsers);
      const partner = join(paths.landingDir, `partner-${ctx.day}.ndjson`);
      const bytes = joinDayFiles(day.dir, join(paths.landingDir, '.partner.ndjson.tmp'));
      const uploads = new UploadRun(server.url, base.apiKey, tokens, true);
      const dropped = performance.now();
      renameSync(join(paths.landingDir, '.partner.ndjson.tmp'), partner);
      ctx.progress(
        `bench: slices: ${variant}: a partner day file of ${mebi(bytes)} MiB (${day.trips.toLocaleString('en-US')} trips) dropped; uploads at ${UPLOADS_PER_S}/s until it is loaded`,
      );
      // set as the uploads go
      const seen: { archivedAfter: number | null; slices: number | null } = { archivedAfter: null, slices: null };
      await uploads.send(
        () => maker.make(templates.whole, uploadUsers),
        UPLOADS_PER_S,
        Number.MAX_SAFE_INTEGER,
        () => {
          seen.slices ??= plannedSlices(paths.landingDir);
          if (seen.archivedAfter === null && !existsSync(partner))
            seen.archivedAfter = (performance.now() - dropped) / 1000;
          return seen.archivedAfter !== null;
        },
      );
      const lags = (await uploads.finish()).lagsMs.map((ms) => ms / 1000);
      const label = `${variant}: ${UPLOADS_PER_S} upload/s beside a ${mebi(bytes)} MiB partner day file of ${base.users.length.toLocaleString('en-US')} drivers (${seen.slices === null ? 'loaded whole' : `${seen.slices} slices`})`;
      const max = lags.length > 0 ? Math.max(...lags) : null;
      for (const [name, v] of [
        ['p50', quantile(lags, 0.5)],
        ['p99', quantile(lags, 0.99)],
      ] as const)
        record(ctx, {
          stage: 'slices',
          metric: `${label}: upload (202) to served, ${name}`,
          value: v === null ? null : Math.round(v * 10) / 10,
          unit: 's',
          doc: true,
        });
      record(ctx, {
        stage: 'slices',
        metric: `${label}: upload (202) to served, max (${lags.length} uploads)`,
        value: max === null ? null : Math.round(max * 10) / 10,
        unit: 's',
        target: `<= ${SLICES_MAX_LAG_S} s`,
        met: max !== null && max <= SLICES_MAX_LAG_S,
      });
      // then score.js beside the same day sent again (one byte more: a new file, every trip
      // replaced by its copy), apart from the uploads, whose lag it would add to while it holds the warehouse
      const again = join(paths.landingDir, `partner-${ctx.day}-again.ndjson`);
      joinDayFiles(day.dir, join(paths.landingDir, '.partner.ndjson.tmp'), '\n');
      renameSync(join(paths.landingDir, '.partner.ndjson.tmp'), again);
      await new Promise((r) => setTimeout(r, SCORE_AFTER_MS));
      const beside = existsSync(again);
      const scored = await runNodeChild('score (beside slices)', jobScript(ctx, 'score'), ['--data-dir', dir], {
        ...childOptions(ctx, false),
        env,
      });
      ctx.children.push(scored);
      record(ctx, {
        stage: 'slices',
        metric: `${variant}: score.js started ${SCORE_AFTER_MS / 1000} s after the file was sent again, while its slices load: exit code (seconds)`,
        value: scored.exitCode,
        unit: `(${scored.wallSeconds.toFixed(1)} s${beside ? '' : '; the file was loaded before it started'})`,
        target: '0',
        met: scored.exitCode === 0 && beside,
      });
      await waitFor(() => !existsSync(again), 24 * 3600_000, 'the file sent again loaded');
      watcher.child.kill('SIGTERM');
      watcherDone = await watcher.done;
      const watched = jobJson(watcherDone) as { tripsLoaded: number; batches: number };
      // the day twice (its copy replaces every trip), and the uploads
      const partnerTrips = (watched.tripsLoaded - lags.length) / 2;
      record(ctx, {
        stage: 'slices',
        metric: `${variant}: the partner file: dropped to archived after its last slice (trips loaded of generated, each time; batches of the watch)`,
        value: seen.archivedAfter === null ? null : Math.round(seen.archivedAfter),
        unit: `s (${partnerTrips.toLocaleString('en-US')} of ${day.trips.toLocaleString('en-US')}; ${watched.batches})`,
        target: 'all loaded',
        met: partnerTrips >= day.trips,
      });
    } finally {
      ctx.children.push(await server.stop());
    }
  } finally {
    if (!watcherDone) {
      watcher.child.kill('SIGTERM');
      watcherDone = await watcher.done;
    }
    ctx.children.push(watcherDone);
    dropDataDir(ctx, dir);
  }
}

/** The generated day files joined into one, as a partner sends a day, and `tail` (returns its bytes). */
function joinDayFiles(dayDir: string, target: string, tail = ''): number {
  const out = openSync(target, 'w', 0o600);
  let bytes = 0;
  try {
    for (const name of readdirSync(dayDir)
      .filter((n) => n.endsWith('.ndjson'))
      .sort()) {
      const text = readFileSync(join(dayDir, name));
      bytes += writeSync(out, text);
      if (text.length > 0 && text[text.length - 1] !== 0x0a) bytes += writeSync(out, '\n');
    }
    if (tail) bytes += writeSync(out, tail);
  } finally {
    closeSync(out);
  }
  return bytes;
}

/** The number of slices of the file being loaded, from its plan (src/load/slice-plan.ts), once there is one. */
function plannedSlices(landingDir: string): number | null {
  const root = join(landingDir, '.slices');
  try {
    for (const name of readdirSync(root)) {
      const plan = join(root, name, 'plan.json');
      if (existsSync(plan) && statSync(plan).isFile())
        return (JSON.parse(readFileSync(plan, 'utf8')) as { slices: unknown[] }).slices.length;
    }
  } catch {
    // no plan yet
  }
  return null;
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
