import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { openState, closeStates } from '../src/state/open.js';
import { recordDeletion } from '../src/state/deletions.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { dropDataDir, ensureBase, ensureDayFiles, folderBytes, mib, newDataDir } from './fixtures.js';

/** The landing archive grows to this many of the generated day's files (fewer when the day has fewer). */
const ARCHIVE_FILES = [1, 3, 8] as const;

type Opened = Record<'archives' | 'points' | 'routes', { files: number; bytes: number }>;

/**
 * Purge: one driver's deletion against a landing archive of 1, 3 and 8 of the generated day's
 * NDJSON files (each of `usersPerFile` drivers), loaded by the real `load.js` from the landing area
 * (so archived and indexed as in service). Each step deletes another driver of the first file and
 * runs `purge.js`: its wall time, peak memory and the bytes it read of the archive, the raw points
 * and the route files. The target is flat: what a purge reads follows the driver's files, not the
 * archive.
 */
export async function benchPurge(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const day = await ensureDayFiles(ctx, 'ndjson');
  const files = readdirSync(day.dir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort()
    .map((n) => join(day.dir, n));
  const dir = await newDataDir(ctx, 'purge');
  const paths = pathsFor(dir);
  mkdirSync(paths.landingDir, { recursive: true });
  const steps = [...new Set(ARCHIVE_FILES.map((n) => Math.min(n, files.length)))];
  let landed = 0;
  let firstRead: number | undefined;
  try {
    for (const [i, step] of steps.entries()) {
      for (const file of files.slice(landed, step)) copyFileSync(file, join(paths.landingDir, basename(file)));
      landed = step;
      ctx.progress(`bench: purge: loading the landing area up to ${step} file(s)`);
      const load = await runNodeChild('load (purge)', jobScript(ctx, 'load'), ['--data-dir', dir, '--json'], {
        ...childOptions(ctx, false),
      });
      ctx.children.push(load);
      jobJson(load);
      // the first file's drivers, one a step: each purge finds its driver in one archive
      const driver = base.users[i];
      if (!driver) throw new Error('purge: no driver left to delete');
      const state = await openState({ dataDir: dir });
      await state.transaction((tx) =>
        recordDeletion(tx, { appId: base.appId, ...driver, requestedAt: new Date().toISOString() }),
      );
      await closeStates();
      const archiveBytes = folderBytes(join(paths.landingDir, 'loaded'));
      const purge = await runNodeChild('purge', jobScript(ctx, 'purge'), ['--data-dir', dir, '--json'], {
        ...childOptions(ctx, false),
      });
      ctx.children.push(purge);
      const result = jobJson(purge) as { purged: { users: number; opened: Opened }; peakRssBytes: number };
      if (result.purged.users !== 1) throw new Error(`purge: ${result.purged.users} drivers purged, not 1`);
      const opened = result.purged.opened;
      const share = (100 * opened.archives.bytes) / archiveBytes;
      firstRead ??= opened.archives.bytes;
      // judged where the archive is largest: flat (no more than the first step read) and under a quarter of it
      const last = steps.length > 1 && step === steps[steps.length - 1];
      const verdict = last
        ? {
            target: 'archive read flat, < 25 % of it',
            met: opened.archives.bytes <= firstRead * 1.1 && share < 25,
          }
        : {};
      record(ctx, {
        stage: 'purge',
        metric: `one driver's purge, landing archive ${mib(archiveBytes)} MiB in ${step} file(s): purge.js wall; archive read (files, share); points and routes read; peak RSS`,
        value: `${purge.wallSeconds.toFixed(1)} s; ${mib(opened.archives.bytes)} MiB (${opened.archives.files}, ${share.toFixed(0)} %); ${mib(opened.points.bytes)} MiB in ${opened.points.files} + ${mib(opened.routes.bytes)} MiB in ${opened.routes.files}; ${mib(result.peakRssBytes)} MiB`,
        unit: '',
        ...verdict,
        doc: true,
      });
    }
  } finally {
    dropDataDir(ctx, dir);
  }
}
