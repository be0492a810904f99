import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sha256File } from '../serving/checksum.js';
import { EXTRAS_SUFFIX, SECTIONS, type Section } from '../serving/format.js';
import type { Manifest } from './manifest.js';

/**
 * The sections of the served pack that hold a damaged file: a layer (or its extras) that is
 * missing or whose bytes no longer have the SHA-256 the served manifest records. A publish reuses,
 * merges and scrubs (a purge) the served layers; it checks them first, so a damaged one is never
 * copied into a new layer and sealed with a fresh checksum: its section is written whole from the
 * slot instead. A manifest that records no checksums (written before they existed) cannot be
 * checked: its layers are taken as they are, as before. Cost: a read of the served pack per
 * publish, about 1 GB/s from the page cache (docs/architecture.md, Checksums).
 */
export function damagedSections(publishedDir: string, current: Manifest | null, progress?: (m: string) => void): { sections: Set<Section>; files: string[] } {
  const out = { sections: new Set<Section>(), files: [] as string[] };
  const pack = current?.pack;
  if (!pack?.sha256) return out;
  for (const section of SECTIONS) {
    const names = pack.files[section];
    if (!Array.isArray(names)) continue;
    for (const name of names.flatMap((n) => [n, `${n}${EXTRAS_SUFFIX}`])) {
      const expected = pack.sha256[name];
      if (expected === undefined) continue;
      const file = join(publishedDir, name);
      const why = !existsSync(file) ? 'missing' : sha256File(file) !== expected ? 'does not match its SHA-256' : null;
      if (why === null) continue;
      out.sections.add(section);
      out.files.push(name);
      progress?.(`publish: serving file ${name} is damaged (${why}): the ${section} section is written whole from the warehouse's slot, never from it`);
    }
  }
  return out;
}
