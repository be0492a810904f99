import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileKey } from './scan-file.js';

/**
 * Where a loaded file's bytes are now: its recorded path if it still holds them, else a copy in
 * the landing archive (`landing/loaded/<day>/<name>`, or `<ms>-<name>` when the name was taken),
 * checked by SHA-256. Null when retention (or an operator) removed every copy.
 * @example await findArchived('/data/landing', { file_key: 'ab12…', path: '/data/landing/day-1.ndjson' })
 */
export async function findArchived(
  landingDir: string,
  loaded: { file_key: string; path: string },
): Promise<string | null> {
  const name = basename(loaded.path);
  const candidates = [loaded.path];
  const archive = join(landingDir, 'loaded');
  if (existsSync(archive)) {
    for (const day of readdirSync(archive).sort()) {
      const dir = join(archive, day);
      if (!statSync(dir).isDirectory()) continue;
      for (const entry of readdirSync(dir).sort()) {
        if (entry === name || (entry.endsWith(`-${name}`) && /^\d+-/.test(entry))) candidates.push(join(dir, entry));
      }
    }
  }
  for (const path of candidates) {
    if (!existsSync(path) || !statSync(path).isFile()) continue;
    if ((await fileKey(path).catch(() => null)) === loaded.file_key) return path;
  }
  return null;
}
