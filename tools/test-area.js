#!/usr/bin/env node
// Runs the tests of one area or more: `npm run test:area -- load score` is vitest over test/load/ and
// test/score/ only. Vitest takes a bare word as a part of a path, so `vitest run load` would also run
// test/api/upload-encoding.test.ts and test/bench/load-generator.test.ts; the area's folder, with
// its slash, is what names it. Without an area, or with one that is not a folder of tests, it lists
// the areas and exits 2. Arguments from the first one starting with `-` on go to vitest as they are.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const test = join(root, 'test');

/** The folders directly under test/ that hold test files (helpers/ and fixtures/ hold none). */
const areas = readdirSync(test, { withFileTypes: true })
  .filter((e) => e.isDirectory() && readdirSync(join(test, e.name)).some((f) => f.endsWith('.test.ts')))
  .map((e) => e.name)
  .sort();

const args = process.argv.slice(2);
const firstFlag = args.findIndex((a) => a.startsWith('-'));
const asked = firstFlag === -1 ? args : args.slice(0, firstFlag);
const flags = firstFlag === -1 ? [] : args.slice(firstFlag);
const unknown = asked.filter((a) => !areas.includes(a.replace(/^test\//, '').replace(/\/$/, '')));
if (asked.length === 0 || unknown.length > 0) {
  if (unknown.length > 0) console.error(`test-area: no area ${unknown.join(', ')}`);
  console.error(`usage: npm run test:area -- <area>... [vitest flags]\nareas: ${areas.join(' ')}`);
  process.exit(2);
}
const folders = asked.map((a) => `test/${a.replace(/^test\//, '').replace(/\/$/, '')}/`);
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(process.execPath, [vitest, 'run', '--config', 'test/vitest.config.ts', ...folders, ...flags], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
