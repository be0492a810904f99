import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { appsOf } from '../src/jobs/data-dir.js';
import { openWarehouse } from '../src/warehouse/warehouse.js';
import { compactArchive } from '../src/load/archive-compact.js';
import { uploadFileName } from '../src/load/uploads.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { dropDataDir, ensureDayFiles, folderBytes, mib, newDataDir } from './fixtures.js';
import { readTemplates, UploadMaker } from './watch-uploads.js';
import { closeStates, openState } from '../src/state/open.js';
import { recordDeletion } from '../src/state/deletions.js';

/** Batches of the simulated day, and SDK uploads a batch holds (the continuous load's batch files). */
const BATCHES = 200;
const TRIPS_PER_BATCH = 10;

/**
 * The landing archive after a day of small batches: BATCHES batch files of TRIPS_PER_BATCH SDK
 * uploads each, loaded by the real `load.js` one file at a time (as the continuous load archives a
 * batch file a publish), then the day merged whole (src/load/archive-compact.ts, as load.js merges
 * the days before today), and `load.js --rederive` of it. Recorded: the archive's files and bytes
 * before and after, the merge's time, the re-derive's wall time, and one driver's purge of the merged
 * day (what it reads of the archive). The targets: the day becomes one merged file (and its
 * sidecar), smaller than the files it holds; the purge reads under a quarter of it.
 */
export async function benchArchiveCompact(ctx: BenchContext): Promise<void> {
  const day = await ensureDayFiles(ctx, 'ndjson');
  const first = readdirSync(day.dir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort()[0];
  if (first === undefined) throw new Error('archive-compact: the generated day has no NDJSON file');
  const templates = readTemplates(join(day.dir, first)).slice(0, BATCHES * TRIPS_PER_BATCH);
  const dir = await newDataDir(ctx, 'archive-compact');
  const paths = pathsFor(dir);
  mkdirSync(paths.landingDir, { recursive: true });
  try {
    // each template as its own driver's trip, moved to that driver's next free slot of the day
    const maker = new UploadMaker(Date.parse(`${ctx.day}T00:00:00Z`), `archive-${Date.now().toString(36)}`);
    const drivers = templates.map((t) => String(t.orgUserId));
    const at = Date.now() - BATCHES * 1000;
    for (let b = 0; b < BATCHES; b++) {
      const lines = Array.from({ length: TRIPS_PER_BATCH }, () => maker.make(templates, drivers).body);
      writeFileSync(join(paths.landingDir, uploadFileName(new Date(at + b * 1000))), `${lines.join('\n')}\n`);
    }
    ctx.progress(`bench: archive-compact: loading ${BATCHES} batch files one at a time`);
    const load = await runNodeChild('load (archive-compact)', jobScript(ctx, 'load'), ['--data-dir', dir, '--json'], {
      ...childOptions(ctx, false),
      env: { ...process.env, DRIVING_LOAD_UPLOAD_BATCH_BYTES: '0' },
    });
    ctx.children.push(load);
    jobJson(load);
    const archive = join(paths.landingDir, 'loaded');
    const before = { files: filesUnder(archive), bytes: folderBytes(archive) };
    const wh = await openWarehouse(paths.warehouseFile, await appsOf(dir));
    const t0 = performance.now();
    try {
      await compactArchive(wh.conn, paths.landingDir, new Date(), { everything: true });
    } finally {
      wh.close();
    }
    const mergeSeconds = (performance.now() - t0) / 1000;
    const after = { files: filesUnder(archive), bytes: folderBytes(archive) };
    record(ctx, {
      stage: 'archive-compact',
      metric: `landing archive of a day of ${BATCHES} batches (${BATCHES * TRIPS_PER_BATCH} trips): files and MiB before, after the merge; the merge's time`,
      value: `${before.files} files, ${mib(before.bytes)} MiB -> ${after.files} files, ${mib(after.bytes)} MiB; ${mergeSeconds.toFixed(1)} s`,
      unit: '',
      target: 'one merged file (and its sidecar), smaller',
      met: after.files <= 2 && after.bytes < before.bytes,
      doc: true,
    });
    const rederive = await runNodeChild(
      'load --rederive (archive-compact)',
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--rederive', '--json'],
      { ...childOptions(ctx, false) },
    );
    ctx.children.push(rederive);
    const result = jobJson(rederive) as { totals: { files: number; missing: number; failed: number } };
    record(ctx, {
      stage: 'archive-compact',
      metric: `load.js --rederive of the merged day (${BATCHES} files read from its members): wall; per file`,
      value: `${rederive.wallSeconds.toFixed(1)} s; ${(rederive.wallSeconds / Math.max(1, result.totals.files)).toFixed(2)} s (${result.totals.files} re-derived, ${result.totals.missing} missing, ${result.totals.failed} failed)`,
      unit: '',
      target: 'every file re-derived',
      met: result.totals.files === BATCHES && result.totals.failed === 0 && result.totals.missing === 0,
      doc: true,
    });
    // one driver of the day deleted: the purge reads and rewrites the driver's members only
    const driver = templates[0] as (typeof templates)[number];
    const state = await openState({ dataDir: dir });
    await state.transaction((tx) =>
      recordDeletion(tx, {
        appId: String(driver['appId']),
        orgUserId: String(driver['orgUserId']),
        platformUserId: Number(driver['platformUserId']),
        requestedAt: new Date().toISOString(),
      }),
    );
    await closeStates();
    const archiveBytes = folderBytes(archive);
    const purge = await runNodeChild(
      'purge (archive-compact)',
      jobScript(ctx, 'purge'),
      ['--data-dir', dir, '--json'],
      {
        ...childOptions(ctx, false),
      },
    );
    ctx.children.push(purge);
    const purged = jobJson(purge) as {
      purged: { users: number; opened: { archives: { files: number; bytes: number } } };
    };
    const read = purged.purged.opened.archives;
    const share = (100 * read.bytes) / archiveBytes;
    record(ctx, {
      stage: 'archive-compact',
      metric: `one driver's purge of the merged day (archive ${mib(archiveBytes)} MiB): purge.js wall; archive read (files, share)`,
      value: `${purge.wallSeconds.toFixed(1)} s; ${mib(read.bytes)} MiB (${read.files}, ${share.toFixed(1)} %)`,
      unit: '',
      target: 'archive read < 25 % of it',
      met: purged.purged.users === 1 && share < 25,
      doc: true,
    });
  } finally {
    dropDataDir(ctx, dir);
  }
}

function filesUnder(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}
