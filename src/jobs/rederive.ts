import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { appsOf } from './data-dir.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { queryFile } from '../db/sql.js';
import { findArchived } from '../load/archive.js';
import { SliceSources } from '../load/slice-rederive.js';
import { memberAsFile } from '../load/archive-members.js';
import { rederiveFile, type RederivedFile } from '../load/rederive-file.js';
import { firstLine, InputError } from '../errors.js';
import { routeOptions } from '../warehouse/route-files.js';
import { publish, type PublishResult } from '../publish/publish.js';
import { emitEvents, type EmitResult } from '../events/emit.js';
import { silent, type Progress } from '../progress.js';
import { isDate } from '../time.js';
import { publishSummary } from './summaries.js';
import { compactQuietly } from '../compact/step.js';

export interface RederiveOptions {
  dataDir: string;
  /** Only files loaded on or after this UTC day (YYYY-MM-DD). */
  since?: string;
  now?: Date;
  progress?: Progress;
}

export interface RederiveResult {
  files: RederivedFile[];
  /** Loaded files whose bytes are gone (retention): their trips keep their stored derivation. */
  missing: { path: string; loadedAt: string }[];
  /** Files that could not be derived again (read or derivation error): they keep what they have. */
  failed: { path: string; error: string }[];
  totals: {
    files: number;
    missing: number;
    failed: number;
    rederived: number;
    changed: number;
    heldElsewhere: number;
    keptAsStored: number;
  };
  publish: PublishResult;
  events: EmitResult;
  seconds: number;
}

/**
 * `load.js --rederive`: every loaded file whose bytes are still at hand (the landing archive keeps
 * them for the points retention) is validated and derived again by the current rules, in load
 * order, one transaction per file; then one publish. Run it after a rule change.
 */
export async function runRederive(options: RederiveOptions): Promise<RederiveResult> {
  const started = Date.now();
  const now = options.now ?? new Date();
  const since = options.since ?? '';
  if (since !== '' && !isDate(since)) throw new InputError(`--since must be YYYY-MM-DD, got '${since}'`);
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const apps = await appsOf(options.dataDir);
  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: settings.memoryLimit });
  try {
    const ledger = await queryFile(wh.conn, 'ops/load/rederive_files', { since });
    progress(`load: ${ledger.length} loaded file(s)${since ? ` since ${since}` : ''}`);
    const files: RederivedFile[] = [];
    const missing: RederiveResult['missing'] = [];
    const failed: RederiveResult['failed'] = [];
    const slices = new SliceSources(paths.landingDir);
    for (const [index, row] of ledger.entries()) {
      const loaded = {
        file_key: String(row['file_key']),
        path: String(row['path']),
        batch_id: Number(row['batch_id']),
      };
      const at = `[${index + 1}/${ledger.length}]`;
      // a file merged into a day's archive is read from its member alone, into a scratch copy
      const member = await memberAsFile(wh.conn, paths.landingDir, loaded.file_key);
      const archived = member?.file ?? (await findArchived(paths.landingDir, loaded));
      // a slice of a large partner file is cut again from that file's archive
      const cut = archived === null ? await slices.cut(wh.conn, loaded.file_key) : null;
      const file = archived ?? cut?.file ?? null;
      if (file === null) {
        missing.push({ path: loaded.path, loadedAt: String(row['loaded_at']) });
        progress(`load: ${at} ${loaded.path}: archive gone, its trips keep their stored derivation`);
        continue;
      }
      const t0 = Date.now();
      let done: RederivedFile;
      try {
        done = await rederiveFile(wh.conn, file, loaded, {
          pointsDir: paths.pointsDir,
          landingDir: paths.landingDir,
          now,
          named: cut?.named,
          ...(member ? { archive: member.archive } : {}),
        });
      } catch (error) {
        // one file must not hold up the others; its transaction never committed, so it keeps what it has
        failed.push({ path: cut?.named ?? file, error: firstLine(error) });
        progress(`load: ${at} ${cut?.named ?? file}: FAILED: ${firstLine(error)}`);
        continue;
      } finally {
        cut?.remove();
        member?.done();
      }
      files.push(done);
      const kept = Object.values(done.keptAsStored).reduce((a, b) => a + b, 0);
      progress(
        `load: ${at} ${done.file}: ${done.rederived} trips re-derived (${done.changed} changed), ${done.heldElsewhere} held by a later file` +
          `${kept > 0 ? `, ${kept} rejected now but kept as stored` : ''} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }
    slices.close();
    progress('load: publishing');
    const published = await publish(wh, {
      publishedDir: paths.publishedDir,
      manifestFile: paths.manifestFile,
      lockWaitMs: settings.publishLockWaitMs,
      now,
      progress: (m) => progress(`load: ${m}`),
      routes: routeOptions(paths, settings.pointsRetentionDays, now),
    });
    const events = await emitEvents(wh, paths.eventsDir, published.version, now);
    // the superseded versions' route files folded into the new ones, once the API has switched
    const compact = { now, retentionDays: settings.pointsRetentionDays, progress, maxMerges: Infinity };
    await compactQuietly(wh.conn, paths, { ...compact, waitMs: settings.publishLockWaitMs });
    const sum = (pick: (f: RederivedFile) => number) => files.reduce((a, f) => a + pick(f), 0);
    return {
      files,
      missing,
      failed,
      totals: {
        files: files.length,
        missing: missing.length,
        failed: failed.length,
        rederived: sum((f) => f.rederived),
        changed: sum((f) => f.changed),
        heldElsewhere: sum((f) => f.heldElsewhere),
        keptAsStored: sum((f) => Object.values(f.keptAsStored).reduce((a, b) => a + b, 0)),
      },
      publish: published,
      events,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    wh.close();
  }
}

export function rederiveSummary(r: RederiveResult): string {
  const t = r.totals;
  return (
    `${t.files} file(s) re-derived, ${t.missing} not re-derivable (archive gone: their trips keep their stored derivation)` +
    `${t.failed > 0 ? `, ${t.failed} FAILED (they keep what they have)` : ''}; ` +
    `${t.rederived} trips re-derived (${t.changed} changed, ${t.keptAsStored} kept as stored), ${t.heldElsewhere} held by later files; ` +
    `${publishSummary(r.publish)} in ${r.seconds.toFixed(1)} s`
  );
}
