import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor, type Paths } from '../../src/data-folder.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { readManifest } from '../../src/publish/manifest.js';

export interface Workspace {
  dir: string;
  paths: Paths;
  appId: string;
  cleanup(): void;
}

/** A fresh data folder with one app in `timeZone`. */
export async function workspace(timeZone = 'Europe/Berlin'): Promise<Workspace> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-test-'));
  const paths = pathsFor(dir);
  const { appId } = await new AppStore(paths.appsFile).add({ name: 'test app', timeZone });
  return { dir, paths, appId, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A fresh data folder holding the same app as `ws` (same appId, so rows compare equal): its apps
 * are written as an earlier release's apps file, which the state store takes in on first open.
 */
export async function workspaceLike(ws: Workspace): Promise<Workspace> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-test-'));
  const paths = pathsFor(dir);
  writeFileSync(paths.appsFile, JSON.stringify({ version: 1, apps: await new AppStore(ws.paths.appsFile).list() }), {
    mode: 0o600,
  });
  return { dir, paths, appId: ws.appId, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeNdjson(path: string, records: unknown[]): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return path;
}

/** Reads NDJSON fixture lines as objects, replacing the fixture's appId with the workspace's. */
export function readFixture(path: string, appId: string, fixtureAppId = 'app-ref'): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const r = JSON.parse(l) as Record<string, unknown>;
      if (r['appId'] === fixtureAppId) r['appId'] = appId;
      return r;
    });
}

/** Every row of a published table (as the API will see it), in key order, minus `columnsToSkip`. */
export async function publishedRows(
  paths: Paths,
  table: string,
  orderBy: string,
  skip: string[] = [],
): Promise<Record<string, unknown>[]> {
  const manifest = readManifest(paths.manifestFile);
  if (!manifest) return [];
  const db = await openDatabase(join(paths.publishedDir, manifest.file), { readOnly: true });
  try {
    const exclude = skip.length > 0 ? ` exclude (${skip.join(', ')})` : '';
    return await query(db.connection, `select *${exclude} from ${table} order by ${orderBy}`);
  } finally {
    db.close();
  }
}

/** Rows of a warehouse table (opens the warehouse read-only; no job may be running). */
export async function warehouseRows(paths: Paths, sql: string): Promise<Record<string, unknown>[]> {
  const db = await openDatabase(paths.warehouseFile, { readOnly: true });
  try {
    return await query(db.connection, sql);
  } finally {
    db.close();
  }
}

export function manifestOf(paths: Paths) {
  return readManifest(paths.manifestFile);
}

/** Copies a data folder's state store (its apps and accounts) into `toDir`; nothing may write it meanwhile. */
export function copyState(fromDir: string, toDir: string): void {
  // the database and its write-ahead log; the shared-memory index is the live process's, rebuilt on open
  cpSync(join(fromDir, 'state'), join(toDir, 'state'), { recursive: true, filter: (src) => !src.endsWith('-shm') });
}

/** A fresh data folder with the same apps (and accounts) as `from`, so the same files load the same way. */
export function sameApps(from: Workspace): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'dds-test-'));
  copyState(from.dir, dir);
  return { dir, paths: pathsFor(dir), appId: from.appId, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
