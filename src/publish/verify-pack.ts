import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { sha256File } from '../serving/checksum.js';
import { EXTRAS_SUFFIX, SECTIONS, type Section } from '../serving/format.js';
import type { Manifest } from './manifest.js';

/**
 * A served layer this publish was about to read (to merge or scrub it) no longer has the SHA-256
 * the served manifest records: its bytes are never copied into a new layer and sealed with a fresh
 * checksum; the publish writes the section whole from the slot instead.
 */
export class DamagedLayerError extends Error {
  constructor(
    readonly section: Section,
    readonly files: string[],
  ) {
    super(`serving files ${files.join(', ')} are damaged`);
  }
}

/**
 * Checks served layers (each with its extras) against the served manifest's SHA-256 and returns
 * the damaged ones: missing, or bytes that no longer match. A publish checks only what it reads: the
 * layers it merges or scrubs (checkLayers, just before) and the files a reader reported damaged
 * (src/damage/reports.ts). A layer it merely names again is not read here: the API verifies every
 * layer before it serves a byte of it (src/serving/verified-pack.ts), reports a mismatch, and the next
 * publish, seeing the report, writes that section whole. So a publish costs what it writes, not a
 * read of the whole served pack (well over ten GB at the full size). A manifest that records
 * no checksums (written before they existed) cannot be checked: its layers are taken as they are.
 */
export function damagedLayers(
  publishedDir: string,
  current: Manifest | null,
  names: readonly string[],
  progress?: (m: string) => void,
): string[] {
  const sums = current?.pack?.sha256;
  if (!sums) return [];
  const out: string[] = [];
  for (const name of names.flatMap((n) => [n, `${n}${EXTRAS_SUFFIX}`])) {
    const expected = sums[name];
    if (expected === undefined) continue;
    const file = join(publishedDir, name);
    const why = !existsSync(file) ? 'missing' : sha256File(file) !== expected ? 'does not match its SHA-256' : null;
    if (why === null) continue;
    out.push(name);
    progress?.(
      `publish: serving file ${name} is damaged (${why}): its section is written whole from the warehouse's slot, never from it`,
    );
  }
  return out;
}

/** Throws DamagedLayerError when one of the served layers `names` (about to be read) is damaged. */
export function checkLayers(
  publishedDir: string,
  current: Manifest | null,
  section: Section,
  names: readonly string[],
  progress?: (m: string) => void,
): void {
  const damaged = damagedLayers(publishedDir, current, names, progress);
  if (damaged.length > 0) throw new DamagedLayerError(section, damaged);
}

/**
 * The sections whose served layers a reader reported damaged (`reported`: file names relative to
 * published/), checked in full: a section with a damaged one is written whole.
 */
export function reportedSections(
  publishedDir: string,
  current: Manifest | null,
  reported: readonly string[],
  progress?: (m: string) => void,
): { sections: Set<Section>; files: string[] } {
  const out = { sections: new Set<Section>(), files: [] as string[] };
  const named = new Set(
    reported.map((r) => basename(r)).map((n) => (n.endsWith(EXTRAS_SUFFIX) ? n.slice(0, -EXTRAS_SUFFIX.length) : n)),
  );
  for (const section of SECTIONS) {
    const layers = current?.pack?.files[section];
    if (!Array.isArray(layers)) continue;
    const damaged = damagedLayers(
      publishedDir,
      current,
      layers.filter((l) => named.has(l)),
      progress,
    );
    if (damaged.length === 0) continue;
    out.sections.add(section);
    out.files.push(...damaged);
  }
  return out;
}
