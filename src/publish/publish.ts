import { existsSync, mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import type { SectionBuildResult } from '../serving/build.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { warehouseId, warehouseVersion } from '../warehouse/warehouse.js';
import { detach } from '../db/statements.js';
import { readManifest, slotFile, writeManifest, type Manifest, type Slot } from './manifest.js';
import { scrubRetired } from './retire.js';
import type { RouteOptions } from '../warehouse/route-files.js';
import { publishRoutes } from './route-step.js';
import { compactDatabase } from '../db/compact.js';
import { catchUp, settledDetail, type Settled } from './settle.js';
import { firstLine } from '../errors.js';
import { readDamageReports, removeDamageReport } from '../damage/reports.js';
import {
  attachWithRetry,
  isCorruptSlot,
  other,
  prepareSlot,
  removeCorrupt,
  slotNoReaderHolds,
} from './standby-slot.js';
import { applyToSlot, purgedAfter } from './apply-to-slot.js';
import type { HeldLayers } from './held-layers.js';
import { packFiles, removeStalePacks, writePack } from './write-pack.js';

export interface PublishOptions {
  publishedDir: string;
  manifestFile: string;
  lockWaitMs: number;
  now: Date;
  /** Write the serving pack the API answers from (default true; the bench's history days skip it but the last). */
  servingPack?: boolean;
  /** Where the pack build reports its steps. */
  progress?: (message: string) => void;
  /** Write the route files the API reads trip routes from (src/warehouse/route-files.ts); none without. */
  routes?: RouteOptions;
  /**
   * After the switch, bring the slot just retired up to the new version too, once the API lets go
   * of it (src/publish/settle.ts): the load does, so the score run's publish copies only scores.
   */
  settleRetired?: boolean;
  /**
   * Called once the new snapshot is switched in (the manifest replaced), before the retired slot is
   * caught up: the load writes its events here, so a webhook does not wait for the catch-up.
   */
  onSwitched?: (version: number) => Promise<void>;
  /** Where a process that publishes again within seconds keeps the served layers open (src/publish/held-layers.ts). */
  heldLayers?: HeldLayers;
}

export interface PublishResult {
  published: boolean;
  slot: Slot | null;
  fromVersion: number;
  version: number;
  rowsApplied: number;
  seconds: number;
  /** The serving pack's sections written by this publish (the others were reused unchanged). */
  pack: SectionBuildResult[] | null;
  /** The standby slot was not a valid DuckDB file (or held a corrupt block): it was deleted and rebuilt in full. */
  corruptSlotRebuilt?: boolean;
  /** Route files written (one per version and trip date that had none). */
  routesWritten?: number;
  /** Route files whose index this publish read to check them (those written since the last check, and reported ones). */
  routesRead?: number;
  /** Published files found damaged and rebuilt from the warehouse (relative to published/): route files, serving files, slots. */
  damagedRebuilt?: string[];
  /** The slot not served, brought up to the served version after the switch (with `settleRetired`). */
  settled?: Settled;
  detail: string;
}

/**
 * Publishes the warehouse's current version: brings the standby slot up to date in one
 * transaction, runs the checks inside it (a failing check rolls everything back), then switches
 * the manifest. The current slot is never written, so readers never see a half-done publish, and a
 * job killed anywhere leaves the last good slot served; the next run finishes the work.
 */
export async function publish(wh: Warehouse, options: PublishOptions): Promise<PublishResult> {
  const conn = wh.conn;
  const started = performance.now();
  const version = await warehouseVersion(conn);
  const whId = await warehouseId(conn);
  // files readers found damaged (src/damage/reports.ts), and route files cut short or of an older
  // format, first: a damaged route file is removed and written again (src/publish/route-step.ts)
  const reports = readDamageReports(options.publishedDir);
  const { written: routesWritten, read: routesRead, removed } = await publishRoutes(conn, options, reports);
  const damaged = [...removed];
  const current = readManifest(options.manifestFile);
  // a reported serving file or slot is rebuilt by a publish even when the version is already published
  const repair = reports.some((r) => !r.file.startsWith('routes/'));
  if (current && current.version === version && current.warehouseId === whId && !repair) {
    for (const r of reports) removeDamageReport(r);
    // a run killed after its switch left the other slot behind: this one finishes that
    const settled = options.settleRetired
      ? await catchUp(wh, options, other(current.slot), { whId, version, compactPurged: true })
      : undefined;
    return {
      published: false,
      slot: current.slot,
      fromVersion: version,
      version,
      rowsApplied: 0,
      seconds: 0,
      pack: null,
      routesWritten,
      routesRead,
      damagedRebuilt: damaged,
      settled,
      detail: `already published${settledDetail(settled)}`,
    };
  }
  mkdirSync(options.publishedDir, { recursive: true });
  const target: Slot = current ? other(current.slot) : await slotNoReaderHolds(conn, options.publishedDir);
  const file = slotFile(options.publishedDir, target);
  const reportedSlots = new Set(reports.map((r) => r.file).filter((f) => /^slot-[ab]\.duckdb$/.test(f)));
  let rebuilt = false;
  if (reportedSlots.has(basename(file)) && existsSync(file)) {
    // a block a reader found damaged: not written into, rebuilt in full (as a corrupt standby is below)
    removeCorrupt(file);
    rebuilt = true;
    damaged.push(basename(file));
    options.progress?.(
      `publish: standby slot ${basename(file)} was reported damaged; deleted, rebuilding it in full from the warehouse`,
    );
  }
  for (;;) {
    try {
      const result = await publishInto(wh, options, {
        version,
        whId,
        current,
        target,
        file,
        started,
        rebuilt,
        reported: reports.map((r) => r.file),
      });
      damaged.push(...(result.damagedRebuilt ?? []));
      // the slot served until now was found damaged: no longer served, it is deleted, so the next
      // publish (which writes it) rebuilds it in full
      const retired = current ? basename(slotFile(options.publishedDir, current.slot)) : null;
      if (retired && retired !== basename(file) && reportedSlots.has(retired)) {
        removeCorrupt(slotFile(options.publishedDir, current!.slot));
        damaged.push(retired);
        options.progress?.(
          `publish: slot ${retired} was reported damaged; no longer served, deleted: the next publish rebuilds it in full`,
        );
      }
      for (const r of reports) removeDamageReport(r);
      await options.onSwitched?.(version);
      // the retired slot, unless it was just deleted as damaged (the next publish rebuilds it)
      const { retiredScrubbed, ...published } = result;
      const settled =
        options.settleRetired && existsSync(slotFile(options.publishedDir, other(target)))
          ? await catchUp(wh, options, other(target), { whId, version, compactPurged: !retiredScrubbed })
          : undefined;
      return {
        ...published,
        routesWritten,
        routesRead,
        damagedRebuilt: damaged,
        settled,
        detail: `${published.detail}${settledDetail(settled)}`,
      };
    } catch (error) {
      // a standby slot that is not a valid DuckDB file (or holds a corrupt block) is not served:
      // it is deleted once and rebuilt from the warehouse (a new slot has version 0). Deleted, not
      // kept aside: a copy nobody serves would still hold personal data that purges never reach.
      if (rebuilt || !isCorruptSlot(error)) throw error;
      removeCorrupt(file);
      rebuilt = true;
      options.progress?.(
        `publish: standby slot ${basename(file)} is corrupt (${firstLine(error)}); deleted, rebuilding it in full from the warehouse`,
      );
    }
  }
}

interface Attempt {
  version: number;
  whId: string;
  current: Manifest | null;
  target: Slot;
  file: string;
  started: number;
  /** A corrupt standby slot was deleted before this attempt. */
  rebuilt: boolean;
  /** Files a reader reported damaged (relative to published/): checked in full by this publish. */
  reported: string[];
}

/** One attempt into the standby slot: brought up to date with its pack, switched to, the retired slot scrubbed. */
async function publishInto(
  wh: Warehouse,
  options: PublishOptions,
  a: Attempt,
): Promise<PublishResult & { retiredScrubbed: boolean }> {
  const conn = wh.conn;
  const { version, whId, current, target, file, started } = a;
  await attachWithRetry(conn, file, options.lockWaitMs, (m) => options.progress?.(`publish: ${m}`));
  try {
    const since = await prepareSlot(conn, whId, version);
    const rowsApplied = await applyToSlot(conn, since, version);
    // a pack that cannot be written fails the publish before the switch: the last good state stays served
    const pack =
      options.servingPack === false
        ? null
        : await writePack(
            conn,
            options.publishedDir,
            version,
            current?.warehouseId === whId ? current : null,
            a.reported,
            options.progress,
            options.heldLayers,
          );
    const damagedPack = pack?.damaged ?? [];
    // the rows of users purged since the slot's version were deleted above, but their bytes stay in
    // the file until it is written anew: rewritten before anyone reads it (src/db/compact.ts)
    if (await purgedAfter(conn, since)) {
      const compacted = await compactDatabase(conn, 'slot', file);
      options.progress?.(
        `publish: ${basename(file)} rewritten without the purged users' deleted rows (${(compacted.bytesBefore / 1e6).toFixed(1)} -> ${(compacted.bytesAfter / 1e6).toFixed(1)} MB in ${compacted.seconds.toFixed(2)} s)`,
      );
    }
    await detach(conn, 'slot');
    const manifest: Manifest = {
      slot: target,
      file: basename(file),
      ...(pack ? { pack: pack.manifest } : {}),
      version,
      warehouseId: whId,
      publishedAt: options.now.toISOString(),
    };
    writeManifest(options.manifestFile, manifest);
    removeStalePacks(options.publishedDir, [...packFiles(pack?.manifest), ...packFiles(current?.pack)]);
    // purged users leave the slot and serving files the API served until now too (privacy)
    const retired = await scrubRetired(conn, options.publishedDir, current, manifest, options.lockWaitMs);
    const seconds = (performance.now() - started) / 1000;
    const packDetail = pack
      ? `; serving pack: ${pack.built.map((b) => `${b.section} ${b.seconds.toFixed(2)} s`).join(', ') || 'unchanged'}`
      : '';
    const retiredDetail =
      retired.users === 0
        ? ''
        : retired.slot
          ? `; slot ${current?.slot} purged too`
          : `; slot ${current?.slot} still held by a reader: purged at the next publish`;
    return {
      published: true,
      slot: target,
      fromVersion: since,
      version,
      rowsApplied,
      seconds,
      pack: pack?.built ?? null,
      corruptSlotRebuilt: a.rebuilt,
      damagedRebuilt: damagedPack,
      retiredScrubbed: retired.slot,
      detail: `slot ${target} now at version ${version} (${rowsApplied} rows in ${seconds.toFixed(2)} s${packDetail}${a.rebuilt ? '; rebuilt in full: the file was corrupt' : ''}${retiredDetail})`,
    };
  } catch (error) {
    await detach(conn, 'slot').catch(() => undefined);
    throw error;
  }
}
