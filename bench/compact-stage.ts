import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { jobSettings } from '../src/job-settings.js';
import { appsOf } from '../src/jobs/data-dir.js';
import { runLoad } from '../src/jobs/load.js';
import { compactStep } from '../src/compact/step.js';
import { openWarehouse } from '../src/warehouse/warehouse.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { dropDataDir, ensureBase, mib, newDataDir } from './fixtures.js';
import { tripTemplates } from './watch-stage.js';
import { UploadMaker } from './watch-uploads.js';

/** Batches of the simulated day at each size, and trips a batch (the continuous load's soak: 3 uploads a second, a batch every second or two). */
const BATCHES = { small: 200, full: 1_000 } as const;
const TRIPS_A_BATCH = 4;

/** Files and bytes of a folder's files, all depths. */
function filesUnder(dir: string): { files: number; bytes: number } {
  if (!existsSync(dir)) return { files: 0, bytes: 0 };
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = filesUnder(path);
      files += inner.files;
      bytes += inner.bytes;
    } else {
      files++;
      bytes += statSync(path).size;
    }
  }
  return { files, bytes };
}

const shown = (f: { files: number; bytes: number }) => `${f.files.toLocaleString('en-US')} files, ${mib(f.bytes)} MiB`;

/**
 * Compact-files: a simulated day of the continuous load's batches (each a file of a few of the
 * generator's trips, loaded and published as the watch does, the warehouse held between them,
 * nothing merged), then the background merge run to its end (src/compact/step.ts): the raw-points
 * and route files on disk before and after, and the merge's wall time; then `load.js --rederive`
 * of every batch file: its wall time and the route and raw-points files it leaves (no second copy).
 */
export async function benchCompact(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const dir = await newDataDir(ctx, 'compact-files');
  const paths = pathsFor(dir);
  const batches = BATCHES[ctx.options.size];
  const templates = (await tripTemplates(ctx)).whole;
  const users = base.users.slice(0, Math.min(200, base.users.length)).map((u) => u.orgUserId);
  const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `compact-${Date.now().toString(36)}`);
  const inbox = join(dir, 'batches');
  mkdirSync(inbox, { recursive: true });
  const size = `${batches} batches of ${TRIPS_A_BATCH} trips`;
  try {
    const wh = await openWarehouse(paths.warehouseFile, await appsOf(dir), { memoryLimit: jobSettings().memoryLimit });
    try {
      const t0 = performance.now();
      for (let b = 0; b < batches; b++) {
        const file = join(inbox, `batch-${String(b).padStart(5, '0')}.ndjson`);
        writeFileSync(
          file,
          `${Array.from({ length: TRIPS_A_BATCH }, () => maker.make(templates, users).body).join('\n')}\n`,
        );
        await runLoad({
          dataDir: dir,
          inputs: [file],
          warehouse: wh,
          routesIncremental: b > 0,
          concurrency: 1,
          settleRetired: false,
          compactMerges: 0,
        });
        if ((b + 1) % 50 === 0) ctx.progress(`bench: compact-files: ${b + 1}/${batches} batches loaded`);
      }
      const loadSeconds = (performance.now() - t0) / 1000;
      const points = filesUnder(paths.pointsDir);
      const routes = filesUnder(paths.routesDir);
      record(ctx, {
        stage: 'compact-files',
        metric: `a simulated day of ${size} (${loadSeconds.toFixed(0)} s): raw points; route files, nothing merged`,
        value: `${shown(points)}; ${shown(routes)}`,
        unit: '',
        doc: true,
      });
      const t1 = performance.now();
      const step = await compactStep(wh.conn, paths, {
        now: new Date(),
        retentionDays: jobSettings().pointsRetentionDays,
        maxMerges: Infinity,
      });
      const mergeSeconds = (performance.now() - t1) / 1000;
      const merged = filesUnder(paths.routesDir);
      record(ctx, {
        stage: 'compact-files',
        metric: `the same day's route files merged (${step.routes.merges} merges): wall; route files after`,
        value: `${mergeSeconds.toFixed(2)} s; ${shown(merged)}`,
        unit: '',
        target: 'route files follow the days, not the batches',
        met: merged.files <= 8,
        doc: true,
      });
      const pointsMerged = filesUnder(paths.pointsDir);
      record(ctx, {
        stage: 'compact-files',
        metric: `the same day's raw-points files merged (${step.points.merges} merges, ${(step.points.bytesRead / 1e6).toFixed(1)} -> ${(step.points.bytesWritten / 1e6).toFixed(1)} MB): raw points before; after`,
        value: `${shown(points)}; ${shown(pointsMerged)}`,
        unit: '',
        target: 'raw-points files follow the days, not the batches',
        met: pointsMerged.files <= 8,
        doc: true,
      });
    } finally {
      wh.close();
    }
    const rederive = await runNodeChild(
      'load --rederive',
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--rederive', '--json'],
      {
        ...childOptions(ctx, false),
      },
    );
    ctx.children.push(rederive);
    const result = jobJson(rederive) as { totals?: { files?: number } };
    const after = filesUnder(paths.routesDir);
    const pointsAfter = filesUnder(paths.pointsDir);
    record(ctx, {
      stage: 'compact-files',
      metric: `load.js --rederive of the ${result.totals?.files ?? batches} batch files: wall; s a batch file; route files after; raw points after`,
      value: `${rederive.wallSeconds.toFixed(1)} s; ${(rederive.wallSeconds / batches).toFixed(2)} s; ${shown(after)}; ${shown(pointsAfter)}`,
      unit: '',
      target: 'no second copy of a route file or of a point',
      met: after.files <= 8 && pointsAfter.files <= 8,
      doc: true,
    });
  } finally {
    dropDataDir(ctx, dir);
  }
}
