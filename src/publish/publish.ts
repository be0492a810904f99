import type { DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { buildSection, mergeLayers, type SectionBuildResult } from '../serving/build.js';
import { EXTRAS_SUFFIX, LAYERED, SECTIONS, type Section } from '../serving/format.js';
import { layersToMerge } from '../serving/layers.js';
import { fileIdentity, sha256File } from '../serving/checksum.js';
import { SectionFile } from '../serving/pack.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { warehouseId, warehouseVersion, inTransaction } from '../warehouse/warehouse.js';
import { isMissingTable, query, queryScript, quoteIdent, quoteLiteral, run, runScript, sqlText, stripComments } from '../db/sql.js';
import { CheckFailedError, runChecks } from './checks.js';
import { readManifest, slotFile, writeManifest, type Manifest, type Slot } from './manifest.js';
import { scrubRetired } from './retire.js';
import { purgedSince, scrubLayers } from '../serving/scrub.js';
import { describeHolder, WAIT_REPORT_EVERY_MS } from '../db/open.js';
import { writeRoutes, type RouteOptions } from './routes.js';
import { upkeepRoutes } from './route-upkeep.js';
import { checkLayers, DamagedLayerError, reportedSections } from './verify-pack.js';
import { compactDatabase } from '../db/compact.js';
import { SETTLE_WAIT_MS, firstLine, settleSlot, type Settled } from './settle.js';
import { readDamageReports, removeDamageReport } from '../damage/reports.js';

export interface PublishOptions {
  publishedDir: string;
  manifestFile: string;
  lockWaitMs: number;
  now: Date;
  /** Write the serving pack the API answers from (default true; the bench's history days skip it but the last). */
  servingPack?: boolean;
  /** Where the pack build reports its steps. */
  progress?: (message: string) => void;
  /** Write the route files the API reads trip routes from (src/publish/routes.ts); none without. */
  routes?: RouteOptions;
  /**
   * After the switch, bring the slot just retired up to the new version too, once the API lets go
   * of it (src/publish/settle.ts): the load does, so the score run's publish copies only scores.
   */
  settleRetired?: boolean;
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
  // format, first: a damaged route file is removed here and written again just below
  const reports = readDamageReports(options.publishedDir);
  const checked = options.routes ? await routesChecked(conn) : {};
  // the route files this job wrote before it (the load's) count as checked as they are now
  const known = { ...checked };
  for (const file of options.routes?.written ?? []) if (existsSync(file)) known[relative(options.publishedDir, file)] = fileIdentity(file);
  const upkeep = options.routes ? upkeepRoutes(options.publishedDir, options.routes.routesDir, reports, options.progress, known) : null;
  const routesRead = upkeep?.read ?? 0;
  // before the switch, so every trip the new snapshot serves has its route file; also when the
  // version is already published (a version served before routes were written gets them now)
  const written = options.routes ? await writeRoutes(conn, options.routes) : [];
  const routesWritten = written.length;
  // a file this publish wrote (fsynced, renamed into place) is intact: the next publish need not
  // read its index (megabytes of JSON for a large day) to find so
  if (upkeep) for (const file of written) upkeep.checked[relative(options.publishedDir, file)] = fileIdentity(file);
  // written only when it changed: a write is a commit (and an fsync), and a score run changes no route file
  if (upkeep && canonical(upkeep.checked) !== canonical(checked)) await run(conn, sqlText('ops/publish/route_checks_save'), { checked: canonical(upkeep.checked) });
  const damaged = [...(upkeep?.removed ?? [])];
  const current = readManifest(options.manifestFile);
  // a reported serving file or slot is rebuilt by a publish even when the version is already published
  const repair = reports.some((r) => !r.file.startsWith('routes/'));
  if (current && current.version === version && current.warehouseId === whId && !repair) {
    for (const r of reports) removeDamageReport(r);
    // a run killed after its switch left the other slot behind: this one finishes that
    const settled = options.settleRetired ? await settle(wh, options, other(current.slot), { whId, version, compactPurged: true }) : undefined;
    return { published: false, slot: current.slot, fromVersion: version, version, rowsApplied: 0, seconds: 0, pack: null, routesWritten, routesRead, damagedRebuilt: damaged, settled, detail: `already published${settledDetail(settled)}` };
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
    options.progress?.(`publish: standby slot ${basename(file)} was reported damaged; deleted, rebuilding it in full from the warehouse`);
  }
  for (;;) {
    try {
      const result = await publishInto(wh, options, { version, whId, current, target, file, started, rebuilt, reported: reports.map((r) => r.file) });
      damaged.push(...(result.damagedRebuilt ?? []));
      // the slot served until now was found damaged: no longer served, it is deleted, so the next
      // publish (which writes it) rebuilds it in full
      const retired = current ? basename(slotFile(options.publishedDir, current.slot)) : null;
      if (retired && retired !== basename(file) && reportedSlots.has(retired)) {
        removeCorrupt(slotFile(options.publishedDir, current!.slot));
        damaged.push(retired);
        options.progress?.(`publish: slot ${retired} was reported damaged; no longer served, deleted: the next publish rebuilds it in full`);
      }
      for (const r of reports) removeDamageReport(r);
      // the retired slot, unless it was just deleted as damaged (the next publish rebuilds it)
      const { retiredScrubbed, ...published } = result;
      const settled = options.settleRetired && existsSync(slotFile(options.publishedDir, other(target)))
        ? await settle(wh, options, other(target), { whId, version, compactPurged: !retiredScrubbed })
        : undefined;
      return { ...published, routesWritten, routesRead, damagedRebuilt: damaged, settled, detail: `${published.detail}${settledDetail(settled)}` };
    } catch (error) {
      // a standby slot that is not a valid DuckDB file (or holds a corrupt block) is not served:
      // it is deleted once and rebuilt from the warehouse (a new slot has version 0). Deleted, not
      // kept aside: a copy nobody serves would still hold personal data that purges never reach.
      if (rebuilt || !isCorruptSlot(error)) throw error;
      removeCorrupt(file);
      rebuilt = true;
      options.progress?.(`publish: standby slot ${basename(file)} is corrupt (${firstLine(error)}); deleted, rebuilding it in full from the warehouse`);
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

const other = (slot: Slot): Slot => (slot === 'a' ? 'b' : 'a');

/** Brings slot `slot` (not served) up to `version` once the API lets go of it (src/publish/settle.ts); never fails the publish. */
async function settle(wh: Warehouse, options: PublishOptions, slot: Slot, s: { whId: string; version: number; compactPurged: boolean }): Promise<Settled> {
  options.progress?.(`publish: catching up slot ${slot} to version ${s.version}`);
  const settled = await settleSlot(wh.conn, options.publishedDir, slot, Math.min(options.lockWaitMs, SETTLE_WAIT_MS), {
    ...s, apply: applyToSlot, purgedAfter,
  });
  if (settled.skipped) options.progress?.(`publish: slot ${slot} left behind for the next publish (${settled.skipped})`);
  return settled;
}

const settledDetail = (s: Settled | undefined): string =>
  (!s || s.skipped || s.fromVersion === s.version ? '' : `; slot ${s.slot} caught up too (${s.rowsApplied} rows in ${s.seconds.toFixed(2)} s)`);

async function publishInto(wh: Warehouse, options: PublishOptions, a: Attempt): Promise<PublishResult & { retiredScrubbed: boolean }> {
  const conn = wh.conn;
  const { version, whId, current, target, file, started } = a;
  await attachWithRetry(conn, file, options.lockWaitMs, (m) => options.progress?.(`publish: ${m}`));
  try {
    const since = await prepareSlot(conn, whId, version);
    const rowsApplied = await applyToSlot(conn, since, version);
    // a pack that cannot be written fails the publish before the switch: the last good state stays served
    const pack = options.servingPack === false ? null : await writePack(conn, options.publishedDir, version, current?.warehouseId === whId ? current : null, a.reported, options.progress);
    const damagedPack = pack?.damaged ?? [];
    // the rows of users purged since the slot's version were deleted above, but their bytes stay in
    // the file until it is written anew: rewritten before anyone reads it (src/db/compact.ts)
    if (await purgedAfter(conn, since)) {
      const compacted = await compactDatabase(conn, 'slot', file);
      options.progress?.(`publish: ${basename(file)} rewritten without the purged users' deleted rows (${(compacted.bytesBefore / 1e6).toFixed(1)} -> ${(compacted.bytesAfter / 1e6).toFixed(1)} MB in ${compacted.seconds.toFixed(2)} s)`);
    }
    await run(conn, 'detach slot');
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
    const packDetail = pack ? `; serving pack: ${pack.built.map((b) => `${b.section} ${b.seconds.toFixed(2)} s`).join(', ') || 'unchanged'}` : '';
    const retiredDetail = retired.users === 0 ? '' : retired.slot ? `; slot ${current?.slot} purged too` : `; slot ${current?.slot} still held by a reader: purged at the next publish`;
    return {
      published: true, slot: target, fromVersion: since, version, rowsApplied, seconds, pack: pack?.built ?? null,
      corruptSlotRebuilt: a.rebuilt,
      damagedRebuilt: damagedPack,
      retiredScrubbed: retired.slot,
      detail: `slot ${target} now at version ${version} (${rowsApplied} rows in ${seconds.toFixed(2)} s${packDetail}${a.rebuilt ? '; rebuilt in full: the file was corrupt' : ''}${retiredDetail})`,
    };
  } catch (error) {
    await run(conn, 'detach database if exists slot').catch(() => undefined);
    throw error;
  }
}

/**
 * The serving pack of the slot just written, with local times in each app's zone (src/serving). A
 * section whose tables have not changed since the served manifest's version (and whose zones are
 * the same) is reused as it is: the score job rewrites only the scores, so its publish does not
 * pay for every trip of the history. Trips, statistics and scores that changed get a delta layer
 * of the rows written since that version, and layers are merged as src/serving/layers.ts decides;
 * with no served pack to build on (the first publish, a zone change, an older format) a section is
 * written whole from SQL. Served layers are checked against their SHA-256 where this reads them
 * (merged or scrubbed) or a reader reported them damaged (src/publish/verify-pack.ts); a damaged
 * one makes its section written whole.
 */
async function writePack(
  conn: DuckDBConnection, publishedDir: string, version: number, current: Manifest | null, reported: string[], progress?: (m: string) => void,
): Promise<{ manifest: NonNullable<Manifest['pack']>; built: SectionBuildResult[]; damaged: string[] }> {
  const damaged = reportedSections(publishedDir, current, reported, progress);
  const zones = Object.fromEntries((await query(conn, 'select app_id, time_zone from apps order by app_id')).map((r) => [String(r['app_id']), String(r['time_zone'])]));
  const previous = current?.pack && JSON.stringify(current.pack.zones) === JSON.stringify(zones) ? current.pack : null;
  const changes = current ? await changesSince(conn, current.version) : null;
  const files = {} as Record<Section, string[]>;
  const built: SectionBuildResult[] = [];
  for (const section of SECTIONS) {
    const old = damaged.sections.has(section) ? undefined : previous?.files[section];
    const target = { publishedDir, version, current, changes, section, zones, progress };
    let written: SectionPack;
    try {
      written = await writeSection(conn, target, old);
    } catch (error) {
      if (!(error instanceof DamagedLayerError)) throw error;
      damaged.files.push(...error.files);
      written = await writeSection(conn, target, undefined);
    }
    files[section] = written.layers;
    built.push(...written.built);
  }
  return { manifest: { files, zones, sha256: checksums(publishedDir, files, built, current) }, built, damaged: damaged.files };
}

interface SectionTarget {
  publishedDir: string;
  version: number;
  current: Manifest | null;
  /** What changed after the served version (null without a served manifest). */
  changes: ServedChanges | null;
  section: Section;
  zones: Record<string, string>;
  progress?: ((m: string) => void) | undefined;
}

interface SectionPack {
  layers: string[];
  built: SectionBuildResult[];
}

/**
 * One section of the new pack on the served layers `old` (undefined: written whole). Throws
 * DamagedLayerError, having written nothing the manifest names, when a served layer it was about
 * to merge or scrub is damaged.
 */
async function writeSection(conn: DuckDBConnection, t: SectionTarget, old: string[] | undefined): Promise<SectionPack> {
  const { publishedDir, version, current, changes, section, zones, progress } = t;
  const built: SectionBuildResult[] = [];
  // a section whose rows have not changed keeps its served layers (the score run's trips and
  // statistics): checked to be of this format, not opened, as opening reads every user's entry
  const unchanged = current !== null && old !== undefined && changes !== null && !changes[section];
  if (unchanged && old.every((name) => SectionFile.readable(join(publishedDir, name), section))) return { layers: old, built };
  // the served layers, opened once: to check they are readable, and to merge from
  const served = current && old ? openLayers(publishedDir, old, section) : null;
  try {
    if (unchanged && served) return { layers: old as string[], built };
    const since = current && served && LAYERED.includes(section) && !(section === 'scores' && changes?.scoresRemoved) ? current.version : undefined;
    if (since !== undefined) await runScript(conn, 'ops/serving/changed_since', { since });
    const home = await currentDatabase(conn);
    await run(conn, 'use slot');
    let result: SectionBuildResult;
    try {
      result = await buildSection(conn, join(publishedDir, `serving-v${version}-${section}.pack`), section, version, zones, progress, since);
    } finally {
      await run(conn, `use ${quoteIdent(home)}`);
    }
    built.push(result);
    if (since === undefined || !served) return { layers: [basename(result.file)], built };
    // checked just before they are read: a damaged layer is never copied into a new one
    const check = (names: string[]) => checkLayers(publishedDir, current, section, names, progress);
    // layers holding users purged since are rewritten without them (src/serving/scrub.ts)
    const layers = scrubLayers(publishedDir, old as string[], served, await purgedSince(conn), section, version, zones, progress, check);
    try {
      built.push(...layers.built);
      const merged = mergeNewest(publishedDir, layers.names, layers.files, result.file, section, version, zones, progress, check);
      if (merged.result) built.push(merged.result);
      return { layers: merged.layers, built };
    } finally {
      for (const f of layers.files) if (!served.includes(f)) f.close();
    }
  } finally {
    for (const f of served ?? []) f.close();
  }
}

/**
 * The SHA-256 of every file the new pack names, and of its extras: from this publish's writes,
 * else from the served manifest (a reused file), else read once (a manifest written before
 * checksums were recorded).
 */
function checksums(publishedDir: string, files: Record<Section, string[]>, built: SectionBuildResult[], current: Manifest | null): Record<string, string> {
  const known: Record<string, string> = { ...current?.pack?.sha256 };
  for (const b of built) {
    known[basename(b.file)] = b.sha256.file;
    known[`${basename(b.file)}${EXTRAS_SUFFIX}`] = b.sha256.extras;
  }
  const out: Record<string, string> = {};
  for (const name of Object.values(files).flat().flatMap((f) => [f, `${f}${EXTRAS_SUFFIX}`])) {
    out[name] = known[name] ?? sha256File(join(publishedDir, name));
  }
  return out;
}

/**
 * The served layers (`names`, oldest first, opened as `served`) and the new delta, with the newest
 * of them merged into one when layersToMerge says so.
 */
function mergeNewest(
  publishedDir: string, names: string[], served: SectionFile[], delta: string, section: Section, version: number,
  zones: Record<string, string>, progress?: (m: string) => void, check?: (names: string[]) => void,
): { layers: string[]; result: SectionBuildResult | null } {
  const fresh = SectionFile.open(delta, section);
  try {
    const stack = [...served, fresh];
    const k = layersToMerge(stack.map((f) => f.weight));
    if (k < 2) return { layers: [...names, basename(delta)], result: null };
    const keep = stack.length - k;
    check?.(names.slice(keep));
    const result = mergeLayers(stack.slice(keep).reverse(), join(publishedDir, `serving-v${version}-${section}-merged.pack`), section, version, zones, keep === 0, progress);
    return { layers: [...names.slice(0, keep), basename(result.file)], result };
  } finally {
    fresh.close();
  }
}

/** The served layers opened, oldest first, or null when one cannot be read (missing, or of an older format: written anew). */
function openLayers(publishedDir: string, names: string[], section: Section): SectionFile[] | null {
  if (!Array.isArray(names) || names.length === 0) return null;
  const opened: SectionFile[] = [];
  for (const name of names) {
    try {
      opened.push(SectionFile.open(join(publishedDir, name), section));
    } catch {
      for (const f of opened) f.close();
      return null;
    }
  }
  return opened;
}

/** Every file a manifest's pack names (a manifest of an older version named one per section). */
function packFiles(pack: Manifest['pack'] | undefined): string[] {
  return Object.values(pack?.files ?? {}).flatMap((names: string[] | string) => (Array.isArray(names) ? names : [names]));
}

export type ServedChanges = Record<Section, boolean> & { scoresRemoved: boolean };

/**
 * What changed in the warehouse after the served version `since`, in one statement: whether the
 * rows each section is made of changed (purges included; sql/ops/serving/changed_<section>.sql), and
 * whether scores were removed (a date scored again no longer gives a driver's score,
 * sql/ops/score/replace_scores.sql). A delta layer can replace a row but not remove one, so a removal
 * makes the score section written whole; a date scored again otherwise gets a delta of the rows
 * whose values changed, which replace the older layers' rows of the same day and interval.
 */
async function changesSince(conn: DuckDBConnection, since: number): Promise<ServedChanges> {
  const part = (name: string, column: string) => `(select ${column} from (${stripComments(sqlText(name))}))`;
  const [row = {}] = await query(conn, `select ${SECTIONS.map((s) => `${part(`ops/serving/changed_${s}`, 'changed')} as ${s}`).join(', ')}, ${part('ops/serving/removed_scores', 'removed')} as scores_removed`, { since });
  return { ...(Object.fromEntries(SECTIONS.map((s) => [s, row[s] === true])) as Record<Section, boolean>), scoresRemoved: row['scores_removed'] === true };
}

/**
 * Packs other than the new one and the one the API may still be serving go (with leftovers of a
 * killed build). An API still draining an older one keeps reading it: an open file outlives its name.
 */
function removeStalePacks(publishedDir: string, keep: (string | undefined)[]): void {
  const kept = new Set(keep.filter((k): k is string => k !== undefined).flatMap((k) => [basename(k), `${basename(k)}${EXTRAS_SUFFIX}`]));
  for (const name of readdirSync(publishedDir)) {
    if (name.startsWith('serving-') && !kept.has(name)) rmSync(join(publishedDir, name), { force: true });
  }
}

/**
 * Brings the slot attached as `slot` from version `since` to `version` in one transaction, with
 * the checks on what changed inside it (a failing check rolls it back), then checkpoints it: the
 * API opens slots read-only and must find every row in the file. Runs only the parts of
 * sql/ops/publish/apply/ that have rows to move (a score run moves scores only), removals before
 * insertions. Returns the rows copied or removed.
 */
export async function applyToSlot(conn: DuckDBConnection, since: number, version: number): Promise<number> {
  const home = await currentDatabase(conn);
  const rows = await inTransaction(conn, async () => {
    const [scope = {}] = await queryScript(conn, 'ops/publish/apply/scope', { since });
    const changed = {
      trips: Number(scope['trips'] ?? 0) > 0,
      days: Number(scope['days'] ?? 0) > 0,
      scores: Number(scope['scores'] ?? 0) > 0,
      purged: Number(scope['purged'] ?? 0) > 0,
    };
    for (const part of ['trips', 'days', 'scores', 'purged'] as const) if (changed[part]) await runScript(conn, `ops/publish/apply/remove_${part}`);
    for (const part of ['trips', 'days', 'scores'] as const) if (changed[part]) await runScript(conn, `ops/publish/apply/insert_${part}`, { since });
    await run(conn, "insert or replace into slot.meta values ('version', $version::varchar)", { version });
    await run(conn, 'use slot');
    try {
      // a check looks at rows written since `since` of the tables it names: none, nothing to find
      const tables = new Set([...(changed.trips ? ['trips', 'trip_events'] : []), ...(changed.days ? ['stats_daily'] : []), ...(changed.scores ? ['safety_scores'] : [])]);
      const failures = await runChecks(conn, since, tables);
      if (failures.length > 0) throw new CheckFailedError(failures);
    } finally {
      await run(conn, `use ${quoteIdent(home)}`);
    }
    return Number(scope['trips'] ?? 0) + Number(scope['days'] ?? 0) + Number(scope['scores'] ?? 0);
  });
  await run(conn, 'checkpoint slot');
  return rows;
}

/** A slot that belongs to another warehouse, or claims a future version, is rebuilt from zero. */
async function prepareSlot(conn: DuckDBConnection, whId: string, version: number): Promise<number> {
  const home = await currentDatabase(conn);
  await run(conn, 'use slot');
  try {
    await ensureSlotSchema(conn);
    const meta = await query(conn, "select key, value from meta where key in ('version', 'warehouse_id')");
    const slotVersion = Number(meta.find((r) => r['key'] === 'version')?.['value'] ?? 0);
    const slotWarehouse = meta.find((r) => r['key'] === 'warehouse_id')?.['value'];
    if (slotWarehouse === whId && slotVersion <= version) return slotVersion;
    for (const table of ['trips', 'trip_events', 'stats_daily', 'safety_scores']) await run(conn, `delete from ${quoteIdent(table)}`);
    await run(conn, "insert or replace into meta values ('version', '0')");
    await run(conn, "insert or replace into meta values ('warehouse_id', $id)", { id: whId });
    return 0;
  } finally {
    await run(conn, `use ${quoteIdent(home)}`);
  }
}

/**
 * Gives the slot in use the tables of sql/ops/publish/slot_schema.sql: a slot whose meta records that
 * file's digest has them, and skips its 22 statements (a cost paid at every publish); a new slot,
 * or one of an earlier schema, runs them once and records the digest. The digest vouches for what
 * this release's script made: a slot changed by other means keeps what they did (a release
 * before digests, run on it again, would have added back indexes this script drops).
 */
async function ensureSlotSchema(conn: DuckDBConnection): Promise<void> {
  const digest = createHash('sha256').update(sqlText('ops/publish/slot_schema')).digest('hex');
  // a new slot has no meta table yet: the query fails (outside any transaction) and the script
  // runs; any other failure is the slot's, said as it is
  const recorded = await query(conn, "select value from meta where key = 'schema_digest'").catch((error: unknown) => {
    if (isMissingTable(error, 'meta')) return [];
    throw error;
  });
  if (recorded[0]?.['value'] === digest) return;
  await runScript(conn, 'ops/publish/slot_schema');
  await run(conn, "insert or replace into meta values ('schema_digest', $digest)", { digest });
}

/**
 * With no manifest (a first publish, or one removed under a running API) either slot may be the
 * one an API serves: a reader's lock names it. The first slot no reader holds is written (a
 * corrupt one counts as free: the publish rebuilds it); with both held, slot a is waited for.
 */
async function slotNoReaderHolds(conn: DuckDBConnection, publishedDir: string): Promise<Slot> {
  for (const slot of ['a', 'b'] as const) {
    try {
      await run(conn, `attach ${quoteLiteral(slotFile(publishedDir, slot))} as slot`);
      await run(conn, 'detach slot');
      return slot;
    } catch (error) {
      if (!/Could not set lock|Conflicting lock/i.test(error instanceof Error ? error.message : String(error))) return slot;
    }
  }
  return 'a';
}

/** The API may still be draining the standby slot after the last switch: wait for it to let go. */
async function attachWithRetry(conn: DuckDBConnection, file: string, waitMs: number, onWait?: (message: string) => void): Promise<void> {
  const deadline = Date.now() + waitMs;
  let reportedAt = -Infinity;
  for (;;) {
    try {
      await run(conn, `attach ${quoteLiteral(file)} as slot`);
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!/Could not set lock|Conflicting lock/i.test(message) || Date.now() > deadline) {
        throw new Error(`cannot open standby slot ${file} for writing: ${message.split('\n')[0]}`);
      }
      // an API lets go of the previous slot when its last request on it ends: say whom we wait for
      if (onWait && Date.now() - reportedAt >= WAIT_REPORT_EVERY_MS) {
        reportedAt = Date.now();
        onWait(`waiting for ${describeHolder(message)} holding the standby slot ${basename(file)} (gives up in ${Math.ceil((deadline - Date.now()) / 1000)} s; DRIVING_PUBLISH_LOCK_WAIT_MS)`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** DuckDB's words for a file that is not a database, or a block whose checksum does not match (not a lock). */
function isCorruptSlot(error: unknown): boolean {
  return /not a valid DuckDB database file|Corrupt database file|does not match stored checksum/i.test(error instanceof Error ? error.message : String(error));
}


/** Deletes a corrupt slot and its write-ahead log. */
function removeCorrupt(file: string): void {
  rmSync(file, { force: true });
  rmSync(`${file}.wal`, { force: true });
}

/** The checked route files' map as saved: by path, so that the same files compare equal whatever order they were found in. */
const canonical = (checked: Record<string, string>): string => JSON.stringify(Object.fromEntries(Object.entries(checked).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/** The route files an earlier publish found intact, with their identity then (src/publish/route-upkeep.ts). */
async function routesChecked(conn: DuckDBConnection): Promise<Record<string, string>> {
  const [row] = await query(conn, sqlText('ops/publish/route_checks'));
  try {
    const parsed: unknown = JSON.parse(String(row?.['checked'] ?? '{}'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
  } catch {
    // unreadable: every route file is checked once more
    return {};
  }
}

/** Whether users were purged after warehouse version `since`. */
export async function purgedAfter(conn: DuckDBConnection, since: number): Promise<boolean> {
  const [row] = await query(conn, 'select exists (select 1 from purged_users where version > $since) as any', { since });
  return row?.['any'] === true;
}

async function currentDatabase(conn: DuckDBConnection): Promise<string> {
  const rows = await query(conn, 'select current_database() as db');
  return String(rows[0]?.['db']);
}
