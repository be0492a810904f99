import type { DuckDBConnection } from '@duckdb/node-api';
import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildSection, mergeLayers, type SectionBuildResult } from '../serving/build.js';
import { EXTRAS_SUFFIX, LAYERED, SECTIONS, type Section } from '../serving/format.js';
import { layersToMerge } from '../serving/layers.js';
import { sha256File } from '../serving/checksum.js';
import { SectionFile } from '../serving/pack.js';
import { purgedSince, scrubLayers } from '../serving/scrub.js';
import { query, queryFile, runScript, sqlText, sqlWith, stripComments } from '../db/sql.js';
import type { HeldLayers } from './held-layers.js';
import type { Manifest } from './manifest.js';
import { checkLayers, DamagedLayerError, reportedSections } from './verify-pack.js';
import { inDatabase } from '../db/statements.js';

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
export async function writePack(
  conn: DuckDBConnection,
  publishedDir: string,
  version: number,
  current: Manifest | null,
  reported: string[],
  progress?: (m: string) => void,
  held?: HeldLayers,
): Promise<{ manifest: NonNullable<Manifest['pack']>; built: SectionBuildResult[]; damaged: string[] }> {
  const damaged = reportedSections(publishedDir, current, reported, progress);
  const zones = Object.fromEntries(
    (await queryFile(conn, 'ops/warehouse/apps_zones')).map((r) => [String(r['app_id']), String(r['time_zone'])]),
  );
  const previous = current?.pack && JSON.stringify(current.pack.zones) === JSON.stringify(zones) ? current.pack : null;
  const changes = current ? await changesSince(conn, current.version) : null;
  const files = {} as Record<Section, string[]>;
  const built: SectionBuildResult[] = [];
  for (const section of SECTIONS) {
    const old = damaged.sections.has(section) ? undefined : previous?.files[section];
    const target = { publishedDir, version, current, changes, section, zones, progress, held };
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
  held?.retain(new Set(Object.values(files).flatMap((names) => names.map((name) => join(publishedDir, name)))));
  return {
    manifest: { files, zones, sha256: checksums(publishedDir, files, built, current) },
    built,
    damaged: damaged.files,
  };
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
  /** Where a process that publishes again soon keeps the served layers open (src/publish/held-layers.ts). */
  held?: HeldLayers | undefined;
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
  // a section whose rows have not changed keeps its served layers (the score run's trips and
  // statistics): checked to be of this format, not opened, as opening reads every user's entry
  const unchanged = t.current !== null && old !== undefined && t.changes !== null && !t.changes[t.section];
  if (unchanged && old.every((name) => SectionFile.readable(join(t.publishedDir, name), t.section)))
    return { layers: old, built: [] };
  // the served layers, opened once: to check they are readable, and to merge from
  const served = t.current && old ? openLayers(t.publishedDir, old, t.section) : null;
  try {
    const written =
      unchanged && served ? { layers: old as string[], built: [] } : await writeLayers(conn, t, old, served);
    t.held?.keep(
      t.section,
      served ?? [],
      written.layers.map((name) => join(t.publishedDir, name)),
    );
    return written;
  } finally {
    for (const f of served ?? []) f.release();
  }
}

/** writeSection with the served layers `served` opened (null: none, or one unreadable). */
async function writeLayers(
  conn: DuckDBConnection,
  t: SectionTarget,
  old: string[] | undefined,
  served: SectionFile[] | null,
): Promise<SectionPack> {
  const { publishedDir, version, current, changes, section, zones, progress } = t;
  const built: SectionBuildResult[] = [];
  const since =
    current && served && LAYERED.includes(section) && !(section === 'scores' && changes?.scoresRemoved)
      ? current.version
      : undefined;
  if (since !== undefined) await runScript(conn, 'ops/serving/changed_since', { since });
  const purged = since === undefined ? new Map<string, Set<number>>() : await purgedSince(conn);
  const result = await inDatabase(conn, 'slot', () =>
    buildSection(
      conn,
      join(publishedDir, `serving-v${version}-${section}.pack`),
      section,
      version,
      zones,
      progress,
      since,
      purged,
    ),
  );
  built.push(result);
  if (since === undefined || !served) return { layers: [basename(result.file)], built };
  // checked just before they are read: a damaged layer is never copied into a new one
  const check = (names: string[]) => checkLayers(publishedDir, current, section, names, progress);
  // layers holding users purged since are rewritten without them (src/serving/scrub.ts)
  const layers = scrubLayers(publishedDir, old as string[], served, purged, section, version, zones, progress, check);
  try {
    built.push(...layers.built);
    const merged = mergeNewest(
      publishedDir,
      layers.names,
      layers.files,
      result.file,
      section,
      version,
      zones,
      progress,
      check,
    );
    if (merged.result) built.push(merged.result);
    return { layers: merged.layers, built };
  } finally {
    for (const f of layers.files) if (!served.includes(f)) f.close();
  }
}

/**
 * The SHA-256 of every file the new pack names, and of its extras: from this publish's writes,
 * else from the served manifest (a reused file), else read once (a manifest written before
 * checksums were recorded).
 */
function checksums(
  publishedDir: string,
  files: Record<Section, string[]>,
  built: SectionBuildResult[],
  current: Manifest | null,
): Record<string, string> {
  const known: Record<string, string> = { ...current?.pack?.sha256 };
  for (const b of built) {
    known[basename(b.file)] = b.sha256.file;
    known[`${basename(b.file)}${EXTRAS_SUFFIX}`] = b.sha256.extras;
  }
  const out: Record<string, string> = {};
  for (const name of Object.values(files)
    .flat()
    .flatMap((f) => [f, `${f}${EXTRAS_SUFFIX}`])) {
    out[name] = known[name] ?? sha256File(join(publishedDir, name));
  }
  return out;
}

/**
 * The served layers (`names`, oldest first, opened as `served`) and the new delta, with the newest
 * of them merged into one when layersToMerge says so.
 */
function mergeNewest(
  publishedDir: string,
  names: string[],
  served: SectionFile[],
  delta: string,
  section: Section,
  version: number,
  zones: Record<string, string>,
  progress?: (m: string) => void,
  check?: (names: string[]) => void,
): { layers: string[]; result: SectionBuildResult | null } {
  const fresh = SectionFile.open(delta, section);
  try {
    const stack = [...served, fresh];
    const k = layersToMerge(stack.map((f) => f.weight));
    if (k < 2) return { layers: [...names, basename(delta)], result: null };
    const keep = stack.length - k;
    check?.(names.slice(keep));
    const result = mergeLayers(
      stack.slice(keep).reverse(),
      join(publishedDir, `serving-v${version}-${section}-merged.pack`),
      section,
      version,
      zones,
      keep === 0,
      progress,
    );
    return { layers: [...names.slice(0, keep), basename(result.file)], result };
  } finally {
    fresh.close();
  }
}

/**
 * The served layers opened, oldest first (each to be release()d), or null when one cannot be read
 * (missing, or of an older format: written anew). Acquired, so that a layer held open since the
 * last publish (src/publish/held-layers.ts) is not parsed again.
 */
function openLayers(publishedDir: string, names: string[], section: Section): SectionFile[] | null {
  if (!Array.isArray(names) || names.length === 0) return null;
  const opened: SectionFile[] = [];
  for (const name of names) {
    try {
      opened.push(SectionFile.acquire(join(publishedDir, name), section));
    } catch {
      for (const f of opened) f.release();
      return null;
    }
  }
  return opened;
}

/** Every file a manifest's pack names (a manifest of an older version named one per section). */
export function packFiles(pack: Manifest['pack'] | undefined): string[] {
  return Object.values(pack?.files ?? {}).flatMap((names: string[] | string) =>
    Array.isArray(names) ? names : [names],
  );
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
  const part = (name: string) => stripComments(sqlText(name));
  const statement = sqlWith('ops/serving/changes', {
    ...Object.fromEntries(SECTIONS.map((s) => [s, part(`ops/serving/changed_${s}`)])),
    removed: part('ops/serving/removed_scores'),
  });
  const [row = {}] = await query(conn, statement, { since });
  return {
    ...(Object.fromEntries(SECTIONS.map((s) => [s, row[s] === true])) as Record<Section, boolean>),
    scoresRemoved: row['scores_removed'] === true,
  };
}

/**
 * Packs other than the new one and the one the API may still be serving go (with leftovers of a
 * killed build). An API still draining an older one keeps reading it: an open file outlives its name.
 */
export function removeStalePacks(publishedDir: string, keep: (string | undefined)[]): void {
  const kept = new Set(
    keep.filter((k): k is string => k !== undefined).flatMap((k) => [basename(k), `${basename(k)}${EXTRAS_SUFFIX}`]),
  );
  for (const name of readdirSync(publishedDir)) {
    if (name.startsWith('serving-') && !kept.has(name)) rmSync(join(publishedDir, name), { force: true });
  }
}
