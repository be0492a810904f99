import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/**
 * The bundle of a dependency that tools/bundle-vendor.js wrote beside the compiled code
 * (dist/src/vendor/<file>), when it was made from the version installed now; else null, and the
 * package loads from node_modules as usual. Run from src/ (the tests) there is no such folder.
 */
export function vendored(
  name: string,
  folder = join(dirname(fileURLToPath(import.meta.url)), 'vendor'),
): string | null {
  const listed = join(folder, 'versions.json');
  if (!existsSync(listed)) return null;
  try {
    const entry = (
      JSON.parse(readFileSync(listed, 'utf8')) as Record<string, { file: string; version: string } | undefined>
    )[name];
    if (!entry) return null;
    const require = createRequire(import.meta.url);
    const installed = (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string })
      .version;
    const file = join(folder, entry.file);
    return installed === entry.version && existsSync(file) ? file : null;
  } catch {
    // an unreadable list or package.json: the package as installed
    return null;
  }
}

/** Where a bundle's V8 code cache is kept (written by writeCodeCache at build time). */
export const codeCacheFile = (bundle: string): string => `${bundle}.v8cache`;

/**
 * The exports of dependency `name`'s bundle (a CommonJS file), or null when there is none (then
 * the caller loads the package). Compiled with the V8 code cache the build wrote beside it: V8
 * then skips parsing and compiling what the cache holds (the functions a load ran), work DuckDB's
 * client would otherwise repeat at every start. A cache V8 rejects (another Node, other flags) is
 * ignored, and the bundle compiles as Node's own loader would.
 */
export function loadVendored<T>(name: string, folder?: string): T | null {
  const bundle = vendored(name, folder);
  if (!bundle) return null;
  const cache = existsSync(codeCacheFile(bundle)) ? readFileSync(codeCacheFile(bundle)) : undefined;
  const { exports, script } = runBundle(bundle, cache);
  codeCacheUse[name] = cache === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  return exports as T;
}

/** How each bundle loaded in this process used its code cache (for the tests and a curious operator). */
export const codeCacheUse: Record<string, 'used' | 'rejected' | 'none'> = {};

/** Runs a CommonJS bundle as Node's loader would (its own require, module, __filename, __dirname). */
function runBundle(bundle: string, cachedData?: Buffer): { exports: unknown; script: Script } {
  const source = readFileSync(bundle, 'utf8');
  // Node's own CommonJS wrapper, so the code sees what it would see under require()
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
  });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(
    module.exports,
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    dirname(bundle),
  );
  return { exports: module.exports, script };
}

/**
 * Loads a bundle once and writes its V8 code cache beside it: run by tools/bundle-vendor.js in a
 * Node process of its own, as a job's would be, after the bundle is written.
 */
export function writeCodeCache(bundle: string): number {
  const { script } = runBundle(bundle);
  const data = script.createCachedData();
  writeFileSync(codeCacheFile(bundle), data);
  return data.length;
}
