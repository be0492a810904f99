import { createHash } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '../db/duckdb.js';
import { threadSetting } from '../db/threads.js';
import { queryFile } from '../db/sql.js';
import type { Manifest } from '../publish/manifest.js';

/** A copied file does not hold what the manifest says: the copy is not switched to. */
export class CopyMismatch extends Error {}

/** SHA-256 (hex) of a file, read as a stream: the follower runs in a process that may be serving. */
function sha256Stream(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Checks the files this copy wrote (`written`, relative to published/) against `manifest`: each
 * serving file against the SHA-256 the manifest records, and the slot by opening it read-only and
 * reading the version and warehouse it says it holds. Files not written were left by rsync as they
 * were (same size and modification time as the source's), checked when they were copied.
 */
export async function verifyCopy(publishedDir: string, manifest: Manifest, written: string[]): Promise<void> {
  const sums = manifest.pack?.sha256 ?? {};
  for (const name of written) {
    const expected = sums[name];
    if (expected === undefined) continue;
    const actual = await sha256Stream(join(publishedDir, name));
    if (actual !== expected) {
      // removed, so that the next check copies it whole rather than trust its size and time
      rmSync(join(publishedDir, name), { force: true });
      throw new CopyMismatch(`${name}: SHA-256 ${actual} where the manifest records ${expected}`);
    }
  }
  if (written.includes(manifest.file)) {
    try {
      await verifySlot(publishedDir, manifest);
    } catch (error) {
      rmSync(join(publishedDir, manifest.file), { force: true });
      throw error;
    }
  }
}

async function verifySlot(publishedDir: string, manifest: Manifest): Promise<void> {
  // a new instance (not the client's cache): the same path held another file before this copy
  const instance = await DuckDBInstance.create(join(publishedDir, manifest.file), {
    access_mode: 'READ_ONLY',
    ...threadSetting(),
  });
  try {
    const conn = await instance.connect();
    try {
      const rows = await queryFile(conn, 'ops/follow/slot_meta');
      const meta = new Map(rows.map((r) => [String(r['key']), String(r['value'])]));
      if (Number(meta.get('version')) !== manifest.version || meta.get('warehouse_id') !== manifest.warehouseId)
        throw new CopyMismatch(
          `${manifest.file}: holds version ${meta.get('version')} of warehouse ${meta.get('warehouse_id')} where the manifest names version ${manifest.version} of ${manifest.warehouseId}`,
        );
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}
