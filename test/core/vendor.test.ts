// The build's bundles of yargs and DuckDB's client (tools/bundle-vendor.js, src/vendor.ts): made
// from the installed versions, the ones a job started from dist/ loads, saying what the packages
// say (yargs' messages in the user's language among it), and never used once stale.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { vendored } from '../../src/vendor.js';

const ROOT = join(import.meta.dirname, '..', '..');
const VENDOR = join(ROOT, 'dist', 'src', 'vendor');
const installed = (name: string): string =>
  (
    JSON.parse(readFileSync(createRequire(join(ROOT, 'package.json')).resolve(`${name}/package.json`), 'utf8')) as {
      version: string;
    }
  ).version;

/** Runs Node on `script` (an ES module's text) from the repository, with `env` added. */
function node(
  script: string,
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
}

describe('vendored bundles', () => {
  it('are listed at the installed versions, and dist/ code loads them', () => {
    const listed = JSON.parse(readFileSync(join(VENDOR, 'versions.json'), 'utf8')) as Record<
      string,
      { file: string; version: string }
    >;
    expect(listed['yargs']).toEqual({ file: 'yargs.js', version: installed('yargs') });
    expect(listed['@duckdb/node-api']).toEqual({ file: 'duckdb-node-api.cjs', version: installed('@duckdb/node-api') });
    const ran = node(
      "const { vendored } = await import('./dist/src/vendor.js'); console.log(JSON.stringify([vendored('yargs'), vendored('@duckdb/node-api'), vendored('luxon')]))",
    );
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual([join(VENDOR, 'yargs.js'), join(VENDOR, 'duckdb-node-api.cjs'), null]);
  });

  it("load DuckDB's client with the V8 code cache the build made, and without a cache V8 refuses", () => {
    const ran = node(
      "await import('./dist/src/db/duckdb.js'); const { codeCacheUse } = await import('./dist/src/vendor.js'); console.log(JSON.stringify(codeCacheUse))",
    );
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({ '@duckdb/node-api': 'used' });
    // a cache of other bytes (another Node's, or damaged) is refused by V8: the bundle compiles and
    // works (in a folder under dist/, where its require finds the native library)
    const folder = mkdtempSync(join(ROOT, 'dist', '.vendor-test-'));
    try {
      copyFileSync(join(VENDOR, 'duckdb-node-api.cjs'), join(folder, 'duckdb-node-api.cjs'));
      writeFileSync(join(folder, 'duckdb-node-api.cjs.v8cache'), Buffer.alloc(4096, 7));
      writeFileSync(
        join(folder, 'versions.json'),
        JSON.stringify({ '@duckdb/node-api': { file: 'duckdb-node-api.cjs', version: installed('@duckdb/node-api') } }),
      );
      const refused = node(
        `const { loadVendored, codeCacheUse } = await import('./dist/src/vendor.js'); const api = loadVendored('@duckdb/node-api', ${JSON.stringify(folder)}); const db = await api.DuckDBInstance.create(':memory:'); const c = await db.connect(); console.log(JSON.stringify([codeCacheUse, (await c.runAndReadAll('select 6 * 7 as n')).getRowObjectsJson()]))`,
      );
      expect(refused.stderr).toBe('');
      expect(JSON.parse(refused.stdout)).toEqual([{ '@duckdb/node-api': 'rejected' }, [{ n: 42 }]]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('run SQL and parse flags as the packages do', () => {
    // DuckDB's client from the bundle, with the native library npm installed: a query, a value read through a pointer
    const ran = node(
      [
        "const { DuckDBInstance, getDataFromPointer } = await import('./dist/src/db/duckdb.js');",
        "const db = await DuckDBInstance.create(':memory:'); const c = await db.connect();",
        'const rows = (await c.runAndReadAll("select 40 + 2 as n, repeat(\'x\', 20) as s")).getRowObjectsJson();',
        'console.log(JSON.stringify(rows), typeof getDataFromPointer);',
      ].join('\n'),
    );
    expect(ran.stderr).toBe('');
    expect(ran.stdout.trim()).toBe(`${JSON.stringify([{ n: 42, s: 'x'.repeat(20) }])} function`);
  });

  it('lay out --help as the packages do, wide characters and emoji included', async () => {
    // the bundle builds string-width's Intl.Segmenter at its first use (tools/bundle-vendor.js)
    const wide = (y: Argv) =>
      y.wrap(80).option('wide', {
        type: 'string',
        describe:
          '幅の広い文字 and emoji 🚗🚕👩‍👩‍👧 in a description long enough to wrap across the line, twice over: 幅の広い文字',
      });
    const bundled = node(
      `const { jobArgs } = await import('./dist/src/jobs/args.js'); console.log(await (${wide.toString()})(jobArgs('demo', 'demo [--wide W]', { argv: [] })).getHelp());`,
    );
    expect(bundled.stderr).toBe('');
    const { jobArgs } = await import('../../src/jobs/args.js');
    const unbundled = await wide(jobArgs('demo', 'demo [--wide W]', { argv: [] })).getHelp();
    expect(unbundled).toContain('幅の広い文字');
    expect(bundled.stdout).toBe(`${unbundled}\n`);
  });

  it("give yargs' messages in the user's language (its catalogues found from the bundle)", () => {
    const run = (lang: string) =>
      spawnSync(process.execPath, ['jobs/score.js', '--bogus'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, LC_ALL: '', LC_MESSAGES: '', LANG: lang },
      });
    const english = run('en_US.UTF-8');
    expect(english.status).toBe(2);
    expect(english.stderr).toContain('Unknown argument: bogus');
    const german = run('de_DE.UTF-8');
    expect(german.status).toBe(2);
    expect(german.stderr).toContain('Unbekanntes Argument: bogus');
  });

  it('are not used when made from another version, or not listed', () => {
    const folder = mkdtempSync(join(tmpdir(), 'dds-vendor-'));
    try {
      copyFileSync(join(VENDOR, 'yargs.js'), join(folder, 'yargs.js'));
      writeFileSync(
        join(folder, 'versions.json'),
        JSON.stringify({ yargs: { file: 'yargs.js', version: installed('yargs') } }),
      );
      expect(vendored('yargs', folder)).toBe(join(folder, 'yargs.js'));
      writeFileSync(join(folder, 'versions.json'), JSON.stringify({ yargs: { file: 'yargs.js', version: '0.0.1' } }));
      expect(vendored('yargs', folder)).toBeNull();
      expect(vendored('@duckdb/node-api', folder)).toBeNull();
      writeFileSync(join(folder, 'versions.json'), '{ not json');
      expect(vendored('yargs', folder)).toBeNull();
      rmSync(join(folder, 'versions.json'));
      expect(vendored('yargs', folder)).toBeNull();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
