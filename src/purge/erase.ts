import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Paths } from '../data-folder.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { writeFileAtomic } from '../fsutil.js';
import { exportParquet, isExport } from '../analyst/parquet-export.js';
import { compactDatabase } from '../db/compact.js';
import { deletedAccounts } from './requests.js';
import { currentCell } from '../cell.js';
import type { PurgedUser } from './archives.js';
import { currentDatabase } from '../db/statements.js';

export interface Erasure {
  /** Undelivered events of the purged users (other than user.deleted) dropped from events/pending/. */
  eventsDropped: number;
  /** Whether the export inside the data folder was written again without them. */
  exportRewritten: boolean;
  /** The warehouse file rewritten without the deleted rows' bytes (null: nothing was purged). */
  warehouse: { bytesBefore: number; bytesAfter: number; seconds: number } | null;
}

/**
 * The last steps of a run that purged users (docs/decisions.md, Deletion, erasure reaches the bytes), after its
 * publish and its event file: the users' undelivered events other than `user.deleted` leave the
 * event files, the export inside the data folder is written again from the purged warehouse, and
 * the warehouse file is rewritten without the deleted rows' bytes (src/db/compact.ts). The
 * slots are rewritten by the publish itself (src/publish/publish.ts, retire.ts). The warehouse goes
 * last and the job must not write to `wh` afterwards: its connection still holds the old file,
 * whose name now holds the new one.
 */
export async function eraseToTheBytes(
  wh: Warehouse,
  paths: Pick<Paths, 'dataDir' | 'eventsDir' | 'exportsDir' | 'warehouseFile'>,
  users: PurgedUser[],
): Promise<Erasure> {
  if (users.length === 0) return { eventsDropped: 0, exportRewritten: false, warehouse: null };
  // a moved driver's events still go out: it was not deleted
  const eventsDropped = dropPendingEvents(
    paths.eventsDir,
    users.filter((u) => !u.moved),
  );
  const exportRewritten = isExport(paths.exportsDir);
  // a cell's machine writes its cell's export (src/analyst/export-layout.ts), as export.js --cell does
  if (exportRewritten)
    await exportParquet(wh, paths.exportsDir, await deletedAccounts({ dataDir: paths.dataDir }), currentCell());
  const compacted = await compactDatabase(wh.conn, await currentDatabase(wh.conn), paths.warehouseFile);
  return { eventsDropped, exportRewritten, warehouse: compacted };
}

/** Rewrites each pending event file without the users' events, `user.deleted` kept (it announces the deletion). */
function dropPendingEvents(dir: string, users: PurgedUser[]): number {
  if (!existsSync(dir)) return 0;
  let dropped = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ndjson') && !n.startsWith('.'))) {
    const file = join(dir, name);
    const lines = readFileSync(file, 'utf8').split('\n');
    const kept = lines.filter((line) => !ofPurgedUser(line, users));
    if (kept.length === lines.length) continue;
    dropped += lines.length - kept.length;
    writeFileAtomic(file, kept.join('\n'));
  }
  return dropped;
}

/**
 * Whether an event line is a purged account's: by app and platformUserId (every event of a user
 * carries it as data.userId). Never by orgUserId: an account made later for the same orgUserId
 * is another account, whose events are its own (docs/decisions.md, Deletion).
 */
function ofPurgedUser(line: string, users: PurgedUser[]): boolean {
  if (line.trim() === '') return false;
  let event: { type?: unknown; appId?: unknown; data?: { userId?: unknown } };
  try {
    event = JSON.parse(line) as typeof event;
  } catch {
    return false;
  }
  if (event.type === 'user.deleted') return false;
  return users.some((u) => event.appId === u.appId && Number(event.data?.userId) === u.platformUserId);
}
