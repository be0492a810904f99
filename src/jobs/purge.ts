import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { appsOf } from './data-dir.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { routeOptions } from '../warehouse/route-files.js';
import { publish, type PublishResult } from '../publish/publish.js';
import type { Erasure } from '../purge/erase.js';
import type { PurgeResult } from '../purge/purge.js';
import { finishErasure, runPurge } from '../purge/step.js';
import { emitEvents, type EmitResult } from '../events/emit.js';
import { silent, type Progress } from '../progress.js';
import { publishSummary } from './summaries.js';

export interface PurgeOptions {
  dataDir: string;
  now?: Date;
  progress?: Progress;
}

export interface PurgeJobResult {
  purged: PurgeResult;
  /** Null when nothing was purged: nothing changed that the slots or the event files show. */
  publish: PublishResult | null;
  events: EmitResult | null;
  erasure: Erasure;
  seconds: number;
  /** The process's peak resident memory so far, in bytes (a purge streams its files: it does not grow with them). */
  peakRssBytes: number;
}

/**
 * The purge job: the purge step of the load and the score (src/purge/step.ts), alone: the deletion
 * requests pending in the shared state store are acted on, the slots are published without the
 * users, their `user.deleted` events written, and the erasure reaches the bytes. With no request
 * pending it publishes nothing (quarantined lines of users purged earlier are still removed).
 */
export async function runPurgeJob(options: PurgeOptions): Promise<PurgeJobResult> {
  const started = Date.now();
  const now = options.now ?? new Date();
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const apps = await appsOf(options.dataDir);
  const settings = jobSettings();
  progress(`purge: opening the warehouse ${paths.warehouseFile}`);
  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: settings.memoryLimit });
  try {
    const purged = await runPurge(wh, paths, now, progress, 'purge');
    let published: PublishResult | null = null;
    let events: EmitResult | null = null;
    if (purged.users > 0) {
      progress('purge: publishing');
      published = await publish(wh, {
        publishedDir: paths.publishedDir,
        manifestFile: paths.manifestFile,
        lockWaitMs: settings.publishLockWaitMs,
        now,
        progress: (m) => progress(`purge: ${m}`),
        routes: routeOptions(paths, settings.pointsRetentionDays, now),
      });
      progress(`purge: publish ${published.detail}`);
      events = await emitEvents(wh, paths.eventsDir, published.version, now);
      if (events.file) progress(`purge: ${events.userDeleted} user.deleted event(s) in ${events.file}`);
    }
    // last: the warehouse file is rewritten, so nothing may write to it after this
    const erasure = await finishErasure(wh, paths, purged, progress, 'purge');
    return {
      purged,
      publish: published,
      events,
      erasure,
      seconds: (Date.now() - started) / 1000,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
    };
  } finally {
    wh.close();
  }
}

/** The one-line summary (after `purge: `). */
export function purgeSummary(r: PurgeJobResult): string {
  if (r.purged.users === 0)
    return `no deletion request pending; ${r.purged.quarantined} quarantined line(s) of earlier purges removed in ${r.seconds.toFixed(1)} s`;
  const p = r.purged;
  const published = r.publish ? publishSummary(r.publish) : 'nothing published';
  return `${p.users} deleted account(s) purged (${p.requests} request(s)): ${p.trips} trips, ${p.pointFilesRewritten} points file(s), ${p.routeFilesRewritten} route file(s) and ${p.archivesRewritten + p.archivesRemoved} landing archive(s) rewritten or removed, ${p.quarantined} quarantined line(s); ${openedSummary(p.opened)}; ${published} in ${r.seconds.toFixed(1)} s`;
}

/** What the purge opened to look for the accounts (the files its index names, and any it does not know). */
function openedSummary(o: PurgeResult['opened']): string {
  const mb = ((o.archives.bytes + o.points.bytes + o.routes.bytes) / 1e6).toFixed(1);
  return `${o.archives.files} archive(s), ${o.points.files} points and ${o.routes.files} route file(s) opened, ${mb} MB`;
}
