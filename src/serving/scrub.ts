import { join } from 'node:path';
import { basename } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile } from '../db/sql.js';
import { mergeLayers, type SectionBuildResult } from './build.js';
import type { Section } from './format.js';
import { SectionFile } from './pack.js';

/** Purged users by app: the users of temp table serving_purged (sql/ops/serving/changed_since.sql). */
export async function purgedSince(conn: DuckDBConnection): Promise<Map<string, Set<number>>> {
  const purged = new Map<string, Set<number>>();
  for (const row of await queryFile(conn, 'ops/serving/purged_users')) {
    const app = String(row['app_id']);
    let users = purged.get(app);
    if (!users) {
      users = new Set();
      purged.set(app, users);
    }
    users.add(Number(row['user_id']));
  }
  return purged;
}

/**
 * The served layers of a section with every layer that still holds a purged user's rows rewritten
 * without them (a new file through the pack writer, named for this version; a file is never
 * edited in place, as the API may be reading it). A purge mark in the new delta would hide those
 * rows from readers already, but their bytes would stay on disk for as long as the layer lives,
 * which for the base can be months. Layers without a purged user are kept as they are.
 *
 * Returns the layers' names and opened files (oldest first) and what was written; the caller
 * closes the opened files (the `served` ones too). `check` is called with a layer's name before it
 * is read.
 */
export function scrubLayers(
  publishedDir: string,
  names: string[],
  served: SectionFile[],
  purged: Map<string, Set<number>>,
  section: Section,
  version: number,
  zones: Record<string, string>,
  progress?: (m: string) => void,
  check?: (names: string[]) => void,
): { names: string[]; files: SectionFile[]; built: SectionBuildResult[] } {
  const out = { names: [...names], files: [...served], built: [] as SectionBuildResult[] };
  if (purged.size === 0) return out;
  const skip = (appId: string, userId: number): boolean => purged.get(appId)?.has(userId) === true;
  try {
    for (const [i, layer] of served.entries()) {
      const holds = [...purged].some(([appId, users]) => layer.usersOf(appId).some((u) => users.has(u)));
      if (!holds) continue;
      // a layer is verified before it is copied (throws when it is damaged: the caller writes the section whole)
      check?.([names[i] as string]);
      const file = join(publishedDir, `serving-v${version}-${section}-scrubbed${i}.pack`);
      const result = mergeLayers([layer], file, section, version, zones, i === 0, progress, skip);
      out.built.push(result);
      out.names[i] = basename(file);
      out.files[i] = SectionFile.open(file, section);
    }
  } catch (error) {
    for (const f of out.files) if (!served.includes(f)) f.close();
    throw error;
  }
  return out;
}
