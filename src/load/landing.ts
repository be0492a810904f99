import { InputError } from '../errors.js';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
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
      out.push(...readdirSync(path).filter((n) => INPUT.test(n) && !n.startsWith('.')).sort().map((n) => join(path, n)));
    } else out.push(path);
  }
  return out;
}

/** Moves a landing file that is safely in the warehouse out of the way of the next run. */
export function archiveLanded(landingDir: string, path: string, day: string): void {
  const dir = join(landingDir, 'loaded', day);
  mkdirSync(dir, { recursive: true });
  renameSync(path, join(dir, basename(path)));
}
