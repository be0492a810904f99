#!/usr/bin/env node
// Bundles the two dependencies every job loads at its start, yargs and DuckDB's Node client, each
// into one file beside the compiled code (dist/src/vendor/), for src/vendor.ts to load: Node reads,
// resolves and links a package's files one by one, yargs' 40 ES modules and the client's 181
// CommonJS files. Run by `npm run build` after
// tsc. A dependency that cannot be bundled as expected is left out, and loads from node_modules.
import { build } from 'rolldown';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'src', 'vendor');
const require = createRequire(join(ROOT, 'package.json'));
const versionOf = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;

/**
 * yargs' ESM shim finds its message catalogues (locales/) from its own file's place: in the bundle
 * that path is rewritten to reach the same folder in node_modules from the bundle's place.
 */
function yargsLocales(bundleFile) {
  const locales = join(dirname(require.resolve('yargs/package.json')), 'locales');
  let rewritten = 0;
  return {
    name: 'yargs-locales',
    transform(code, id) {
      if (!id.replaceAll('\\', '/').endsWith('yargs/lib/platform-shims/esm.mjs')) return null;
      const from = "resolve(__dirname, '../../../locales')";
      if (!code.includes(from)) return null;
      rewritten++;
      return code.replace(
        from,
        `resolve(__dirname, ${JSON.stringify(relative(bundleFile, locales).replaceAll('\\', '/'))})`,
      );
    },
    buildEnd() {
      if (rewritten !== 1) throw new Error(`yargs' locales path was found ${rewritten} times, not once`);
    },
  };
}

/**
 * string-width (cliui's, for laying out --help) builds two things when it loads that cost every
 * job's start, for text only --help lays out: an Intl.Segmenter (which loads ICU's break rules)
 * and the regular expression /^\p{RGI_Emoji}$/v, whose literal V8 checks, at some cost, while
 * compiling the module. In the bundle each is made at its first use instead, when every use of it
 * is a call of the one method the stand-in has.
 */
const LAZY = [
  {
    made: 'const segmenter = new Intl.Segmenter();',
    name: 'segmenter',
    method: 'segment',
    make: 'new Intl.Segmenter()',
  },
  {
    made: 'const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;',
    name: 'rgiEmojiRegex',
    method: 'test',
    make: `new RegExp(${JSON.stringify('^\\p{RGI_Emoji}$')}, 'v')`,
  },
];

function madeAtFirstUse() {
  let rewritten = 0;
  return {
    name: 'made-at-first-use',
    transform(code) {
      let out = code;
      for (const l of LAZY) {
        if (!out.includes(l.made)) continue;
        // any use other than `name.method(` leaves the module as it is
        const uses = out
          .replace(l.made, '')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/\/\/[^\n]*/g, '');
        if (new RegExp(`\\b${l.name}\\b(?!\\.${l.method}\\()`).test(uses)) continue;
        out = out.replace(
          l.made,
          `const ${l.name} = { made: null, ${l.method}(value) { this.made ??= ${l.make}; return this.made.${l.method}(value); } };`,
        );
        rewritten++;
      }
      return out === code ? null : out;
    },
    buildEnd() {
      console.log(`bundle-vendor: ${rewritten} value(s) made at first use (Intl.Segmenter, RGI_Emoji)`);
    },
  };
}

const BUNDLES = [
  {
    name: 'yargs',
    file: 'yargs.js',
    entry: "export { default as yargs } from 'yargs';\nexport { hideBin } from 'yargs/helpers';\n",
    format: 'esm',
    plugins: (file) => [yargsLocales(file), madeAtFirstUse()],
  },
  {
    name: '@duckdb/node-api',
    file: 'duckdb-node-api.cjs',
    entry: "module.exports = require('@duckdb/node-api');\n",
    format: 'cjs',
    // the native library stays where npm put it; the bundle must find the very copy the client would
    external: ['@duckdb/node-bindings'],
    check: () => {
      const fromClient = createRequire(require.resolve('@duckdb/node-api')).resolve('@duckdb/node-bindings');
      const fromBundle = createRequire(join(OUT, 'x.cjs')).resolve('@duckdb/node-bindings');
      if (fromClient !== fromBundle)
        throw new Error(`@duckdb/node-bindings resolves to ${fromBundle} from dist, ${fromClient} from the client`);
    },
  },
];

mkdirSync(OUT, { recursive: true });
const versions = {};
for (const b of BUNDLES) {
  const file = join(OUT, b.file);
  // named for the entry's own syntax (an ES module re-exporting, or CommonJS requiring)
  const entry = join(OUT, `.entry-${b.name.replace(/\W/g, '-')}.${b.entry.startsWith('export') ? 'mjs' : 'cjs'}`);
  const started = performance.now();
  try {
    b.check?.();
    writeFileSync(entry, b.entry);
    await build({
      input: entry,
      platform: 'node',
      external: b.external ?? [],
      plugins: b.plugins?.(file) ?? [],
      logLevel: 'warn',
      output: { file, format: b.format, codeSplitting: false },
    });
    // the client's V8 code cache (src/vendor.ts), made by a Node process of its own loading the
    // bundle as a job does; an ES module takes none on Node 20 (yargs': a few ms, not worth it)
    const made =
      b.format !== 'cjs'
        ? null
        : spawnSync(
            process.execPath,
            [
              '--input-type=module',
              '-e',
              `const { writeCodeCache } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'vendor.js')).href)}); console.log(writeCodeCache(process.argv[1]))`,
              file,
            ],
            { encoding: 'utf8' },
          );
    if (made && made.status !== 0) throw new Error(`its code cache: ${made.stderr.trim().split('\n').pop()}`);
    versions[b.name] = { file: b.file, version: versionOf(b.name) };
    const cache = made ? `, code cache ${(Number(made.stdout) / 1024).toFixed(0)} KiB` : '';
    console.log(
      `bundle-vendor: ${b.name} ${versions[b.name].version} -> ${relative(ROOT, file)} (${(readFileSync(file).length / 1024).toFixed(0)} KiB${cache}, in ${((performance.now() - started) / 1000).toFixed(2)} s)`,
    );
  } catch (error) {
    rmSync(file, { force: true });
    rmSync(`${file}.v8cache`, { force: true });
    console.warn(
      `bundle-vendor: ${b.name} left unbundled (loads from node_modules): ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    rmSync(entry, { force: true });
  }
}
// what src/vendor.ts checks against the installed packages before it loads a bundle
writeFileSync(join(OUT, 'versions.json'), `${JSON.stringify(versions, null, 2)}\n`);
