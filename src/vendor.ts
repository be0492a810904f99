import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The bundle of a dependency that tools/bundle-vendor.js wrote beside the compiled code
 * (dist/src/vendor/<file>), when it was made from the version installed now; else null, and the
 * package loads from node_modules as usual. Run from src/ (the tests) there is no such folder.
 */
export function vendored(name: string, folder = join(dirname(fileURLToPath(import.meta.url)), 'vendor')): string | null {
  const listed = join(folder, 'versions.json');
  if (!existsSync(listed)) return null;
  try {
    const entry = (JSON.parse(readFileSync(listed, 'utf8')) as Record<string, { file: string; version: string } | undefined>)[name];
    if (!entry) return null;
    const require = createRequire(import.meta.url);
    const installed = (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
    const file = join(folder, entry.file);
    return installed === entry.version && existsSync(file) ? file : null;
  } catch {
    // an unreadable list or package.json: the package as installed
    return null;
  }
}
