import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathsFor } from '../../src/config.js';
import { workspace, type Workspace } from './workspace.js';

interface Template<T> {
  dir: string;
  appId: string;
  built: T;
}

// One template a key in each worker process, until the file that built it removes it (its afterAll
// calls removeBuiltFolders: an exit handler did not run in vitest's workers, which are stopped).
const templates = new Map<string, Promise<Template<unknown>>>();
const templateDirs: string[] = [];

/** Removes every template this worker built; a file that calls builtFolder calls this in afterAll. */
export function removeBuiltFolders(): void {
  for (const dir of templateDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  templates.clear();
}

/**
 * A fresh data folder holding what `build` made in a workspace of `timeZone`: built once for `key`
 * (the first call), then handed out as a copy until removeBuiltFolders, so a test may change its
 * own folder freely. Copying a small data folder takes milliseconds; building one (generate, load,
 * score, publish) seconds of CPU. `built` is what `build` returned (the same object every time:
 * do not change it). No job may hold the template's databases open: `build` must await its jobs.
 */
export async function builtFolder<T>(key: string, timeZone: string, build: (ws: Workspace) => Promise<T>): Promise<{ ws: Workspace; built: T }> {
  let template = templates.get(key) as Promise<Template<T>> | undefined;
  if (template === undefined) {
    template = (async () => {
      const ws = await workspace(timeZone);
      templateDirs.push(ws.dir);
      return { dir: ws.dir, appId: ws.appId, built: await build(ws) };
    })();
    templates.set(key, template);
    // a failed build is tried again by the next caller instead of failing every later test
    template.catch(() => templates.delete(key));
  }
  const { dir: from, appId, built } = await template;
  const dir = mkdtempSync(join(tmpdir(), 'dds-test-'));
  // SQLite's shared-memory index belongs to the process that had the store open; it is rebuilt on open
  cpSync(from, dir, { recursive: true, filter: (src) => !src.endsWith('-shm') });
  return { ws: { dir, paths: pathsFor(dir), appId, cleanup: () => rmSync(dir, { recursive: true, force: true }) }, built };
}
