import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Joins the NDJSON day files the generator wrote into `dir` into one file, `dir/all.ndjson`, in
 * name order (day order), and removes them. A load pays a fixed cost for each file it reads (its
 * derivation chain, about half a second of CPU even for a tiny file), so a test whose point is
 * not that the days come in separate files loads them as one. Returns the file's path.
 */
export function oneFile(dir: string): string {
  const names = readdirSync(dir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort();
  if (names.length === 0) throw new Error(`no NDJSON file in ${dir}`);
  const text = names
    .map((n) => readFileSync(join(dir, n), 'utf8'))
    .map((t) => (t.endsWith('\n') ? t : `${t}\n`))
    .join('');
  for (const n of names) rmSync(join(dir, n));
  const file = join(dir, 'all.ndjson');
  writeFileSync(file, text);
  return file;
}
