import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { slotFile, type Manifest } from '../publish/manifest.js';
import { attachWhenReleased } from '../publish/retire.js';
import { detach } from '../db/statements.js';

/**
 * Whether the API serves the manifest's snapshot alone: no process holds the other slot (the one
 * the manifest does not name) any more. The API closes a slot and its serving files together once
 * it has switched and drained (as src/publish/retire.ts relies on), so a file only an earlier
 * snapshot named is read by nobody from then on. Waits up to `waitMs` for the release.
 */
export async function servesManifestAlone(
  conn: DuckDBConnection,
  publishedDir: string,
  manifest: Manifest,
  waitMs: number,
): Promise<boolean> {
  const retired = slotFile(publishedDir, manifest.slot === 'a' ? 'b' : 'a');
  if (!existsSync(retired)) return true;
  try {
    // no wait: one try (a batch must not pause for an API still draining)
    if (!(await attachWhenReleased(conn, retired, waitMs > 0 ? waitMs : -1, 'compact_retired'))) return false;
  } catch {
    // not a DuckDB file the slot's publish can use as it is: that publish deals with it
    return false;
  }
  await detach(conn, 'compact_retired');
  return true;
}
