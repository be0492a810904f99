import { existsSync, readdirSync, renameSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { isInputName } from '../landing-status.js';

/** A landing file whose name was not valid UTF-8, and the name the load gave it before taking it. */
export interface RenamedInput {
  /** The old name as text, its bad bytes shown as U+FFFD. */
  from: string;
  /** The file's path now. */
  to: string;
}

/**
 * Gives each input file at the top of the landing area whose name is not valid UTF-8 a name that
 * is: every byte outside ASCII, and `%`, written as `%XX` (so the old name can be read back from
 * the new). Node's text names could not reach such a file at all: it was neither loaded nor set
 * aside nor counted. Renamed, it loads like any other (docs/decisions.md, "Landing: names that are
 * not UTF-8").
 */
export function renameBadNames(landingDir: string): RenamedInput[] {
  let names: Buffer[];
  try {
    names = readdirSync(landingDir, { encoding: 'buffer' });
  } catch {
    return [];
  }
  const renamed: RenamedInput[] = [];
  for (const raw of names) {
    if (isUtf8(raw) || !isInputName(raw.toString('latin1'))) continue;
    let safe = escapeName(raw);
    if (existsSync(join(landingDir, safe))) safe = `${Date.now()}-${safe}`;
    const to = join(landingDir, safe);
    try {
      renameSync(Buffer.concat([Buffer.from(`${landingDir}/`), raw]), to);
    } catch {
      // gone since the listing
      continue;
    }
    renamed.push({ from: raw.toString('utf8'), to });
  }
  return renamed;
}

/** The name's bytes, those outside printable ASCII and `%` written as `%XX`. */
export function escapeName(raw: Buffer): string {
  let out = '';
  for (const byte of raw) {
    out +=
      byte < 0x20 || byte >= 0x7f || byte === 0x25
        ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
        : String.fromCharCode(byte);
  }
  return out;
}
