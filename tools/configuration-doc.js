#!/usr/bin/env node
// Writes the table of every setting (src/settings.ts) into docs/configuration.md, between its
// markers; test/core/settings.test.ts fails while the two differ. Run after `npm run build`.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../dist/src/settings.js';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
const text = readFileSync(file, 'utf8');
const next = text.replace(
  /(<!-- settings:start[^>]*-->\n)[\s\S]*?(<!-- settings:end -->)/,
  (_, start, end) => `${start}${settingsTable()}\n${end}`,
);
if (next === text) console.log('configuration-doc: docs/configuration.md is up to date');
else {
  writeFileSync(file, next);
  console.log('configuration-doc: docs/configuration.md rewritten');
}
