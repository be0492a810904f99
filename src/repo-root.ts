import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository's root: the nearest folder above this file that holds package.json. Found by
 * walking up because this module runs from src/ (tests) and from dist/src/ (jobs), which sit at
 * different depths.
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export const REPO_ROOT = findRoot();

/** A path inside the repository, e.g. `repoPath('sql', 'marts')`. */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
