import { InputError } from '../errors.js';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const INPUT = /\.(ndjson|jsonl|json)(\.gz)?$|\.parquet$/i;

/** Files in the landing area, oldest name first; dot-files are uploads still being written. */
export function landingFiles(landingDir: string): string[] {
  if (!existsSync(landingDir)) return [];
  return readdirSync(landingDir)
    .filter((name) => !name.startsWith('.') && INPUT.test(name))
    .map((name) => join(landingDir, name))
    .filter((path) => statSync(path).isFile())
    .sort();
}

/** `--input` values: files, or folders whose input files are taken in name order. */
export function expandInputs(inputs: string[]): string[] {
  const out: string[] = [];
  for (const input of inputs) {
    const path = resolve(input);
    if (!existsSync(path)) throw new InputError(`--input ${input}: no such file or folder`);
    if (statSync(path).isDirectory()) {
      const found = readdirSync(path).filter((n) => INPUT.test(n) && !n.startsWith('.')).sort();
      if (found.length === 0) throw new InputError(`--input ${input}: no .ndjson, .ndjson.gz, .jsonl or .parquet files in this folder`);
      out.push(...found.map((n) => join(path, n)));
    } else out.push(path);
  }
  return out;
}

/**
 * Moves a landing file out of the way of the next run: into `loaded/<day>/` once it is safely in
 * the warehouse, or `failed/<day>/` (with a `.reason.txt`) when it could not be read at all.
 * A name already there gets a time prefix instead of replacing the earlier file.
 */
export function moveLanded(landingDir: string, path: string, day: string, outcome: 'loaded' | 'failed', reason?: string): string {
  const dir = join(landingDir, outcome, day);
  mkdirSync(dir, { recursive: true });
  let target = join(dir, basename(path));
  if (existsSync(target)) target = join(dir, `${Date.now()}-${basename(path)}`);
  renameSync(path, target);
  if (reason) writeFileSync(`${target}.reason.txt`, `${reason}\n`);
  return target;
}
