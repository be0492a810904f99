import { cpSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { inject } from 'vitest';
import { pathsFor } from '../../src/data-folder.js';
import { workspace, type Workspace } from './workspace.js';

interface Template<T> {
  dir: string;
  appId: string;
  built: T;
}

// One template a key in each worker process. A file's own templates live until that file removes
// them (its afterAll calls removeBuiltFolders: an exit handler did not run in vitest's workers,
// which are stopped); shared ones (sharedFolder) until the run ends, in the run's fixtures folder.
const templates = new Map<string, Promise<Template<unknown>>>();
const templateDirs: string[] = [];
const shared = new Map<string, Promise<Template<unknown>>>();

/** Removes every template this worker built for a file; a file that calls builtFolder calls this in afterAll. */
export function removeBuiltFolders(): void {
  for (const dir of templateDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  templates.clear();
}

/** A fresh copy of `from` (a template); SQLite's shared-memory index belongs to the process that had the store open, and is rebuilt on open. */
function copyOf(from: string, appId: string): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'dds-test-'));
  cpSync(from, dir, { recursive: true, filter: (src) => !src.endsWith('-shm') });
  return { dir, paths: pathsFor(dir), appId, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The template of `key` in `cache`, made by `make` on the first call; a failed make is tried again by the next caller. */
async function templateOf<T>(
  cache: Map<string, Promise<Template<unknown>>>,
  key: string,
  make: () => Promise<Template<T>>,
): Promise<Template<T>> {
  let template = cache.get(key) as Promise<Template<T>> | undefined;
  if (template === undefined) {
    template = make();
    cache.set(key, template);
    // a failed build is tried again by the next caller instead of failing every later test
    template.catch(() => cache.delete(key));
  }
  return template;
}

/**
 * A fresh data folder holding what `build` made in a workspace of `timeZone`: built once for `key`
 * (the first call), then handed out as a copy until removeBuiltFolders, so a test may change its
 * own folder freely. Copying a small data folder takes milliseconds; building one (generate, load,
 * score, publish) seconds of CPU. `built` is what `build` returned (the same object every time:
 * do not change it). No job may hold the template's databases open: `build` must await its jobs.
 */
export async function builtFolder<T>(
  key: string,
  timeZone: string,
  build: (ws: Workspace) => Promise<T>,
): Promise<{ ws: Workspace; built: T }> {
  const { dir, appId, built } = await templateOf(templates, key, async () => {
    const ws = await workspace(timeZone);
    templateDirs.push(ws.dir);
    return { dir: ws.dir, appId: ws.appId, built: await build(ws) };
  });
  return { ws: copyOf(dir, appId), built };
}

/**
 * As builtFolder, for a folder several test FILES start from: built once per worker and run (a
 * worker keeps its modules, and so this cache, from one file to the next) and removed when the run
 * ends. `build` is handed its own workspace to fill (`start` gives it one, e.g. a copy of another
 * shared folder; by default an empty one in `timeZone`). The key names everything `build` does.
 */
export async function sharedFolder<T>(
  key: string,
  start: () => Promise<Workspace>,
  build: (ws: Workspace) => Promise<T>,
): Promise<{ ws: Workspace; built: T }> {
  const { dir, appId, built } = await templateOf(shared, key, async () => {
    const ws = await start();
    try {
      const made = await build(ws);
      // into the run's fixtures folder, which the run removes when it ends (same file system: a rename)
      const dir = join(inject('fixturesDir'), basename(ws.dir));
      renameSync(ws.dir, dir);
      return { dir, appId: ws.appId, built: made };
    } finally {
      ws.cleanup();
    }
  });
  return { ws: copyOf(dir, appId), built };
}
