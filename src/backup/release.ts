import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { repoPath } from '../repo-root.js';

/** The release that runs: package.json's name and version, and the commit when a checkout has one. */
export function currentRelease(): { name: string; version: string; commit: string | null } {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { name: string; version: string };
  let commit: string | null = null;
  if (existsSync(repoPath('.git'))) {
    try {
      commit =
        execFileSync('git', ['-C', repoPath(), 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim() || null;
    } catch {
      // no git on the machine: the version alone names the release
    }
  }
  return { name: pkg.name, version: pkg.version, commit };
}
