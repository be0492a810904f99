import { pathsFor } from '../data-folder.js';
import { resolveDatabaseUrl } from '../state/open.js';
import type { OutboxStore } from './outbox-store.js';

/**
 * Where the outbox is: PostgreSQL when the service has a database URL (`databaseUrl`, else
 * DATABASE_URL), so every machine's deliverer and API reach one outbox; otherwise the data
 * folder's DuckDB file, as on one machine.
 */
export function outboxUrl(databaseUrl?: string | null): string | null {
  return databaseUrl === undefined ? resolveDatabaseUrl() : databaseUrl;
}

/** Opens the outbox of a data folder (its DuckDB file) or of the database URL (PostgreSQL). */
export async function openOutbox(
  dataDir: string,
  options: { readOnly?: boolean; lockWaitMs?: number; databaseUrl?: string | null } = {},
): Promise<OutboxStore> {
  const url = outboxUrl(options.databaseUrl);
  // pg and DuckDB are loaded only for the outbox in use
  if (url) return (await import('./outbox-pg.js')).PostgresOutbox.open(url);
  const { Outbox } = await import('./outbox.js');
  return Outbox.open(pathsFor(dataDir).outboxFile, {
    ...(options.readOnly !== undefined ? { readOnly: options.readOnly } : {}),
    ...(options.lockWaitMs !== undefined ? { lockWaitMs: options.lockWaitMs } : {}),
  });
}

const shared = new Map<string, Promise<OutboxStore>>();

/**
 * The PostgreSQL outbox at `url`, opened once per process and shared by its requests (the webhook
 * API asks it for every deliveries page). Closed by `closeSharedOutboxes`.
 */
export function sharedPostgresOutbox(url: string): Promise<OutboxStore> {
  let outbox = shared.get(url);
  if (!outbox) {
    outbox = import('./outbox-pg.js').then((m) => m.PostgresOutbox.open(url));
    shared.set(url, outbox);
    outbox.catch(() => shared.delete(url));
  }
  return outbox;
}

export async function closeSharedOutboxes(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => null))?.close()));
}
