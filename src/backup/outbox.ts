import { existsSync } from 'node:fs';
import { pathsFor } from '../data-folder.js';
import { askOutbox } from '../webhooks/ask-outbox.js';

/** How a backup took the outbox: copied (by the running deliverer, or read-only), none yet, or within pg_dump's. */
export type OutboxCopy = 'by the deliverer' | 'read-only' | 'none' | 'in the state dump';

/**
 * Copies the webhook outbox into `target` (a new DuckDB file) without stopping the deliverer.
 * DuckDB lets no process open a file another writes, so while the deliverer holds the outbox the
 * request goes over its control socket and the deliverer writes the copy itself, between two of
 * its transactions; when none runs, the outbox is opened read-only here for the copy (a deliverer
 * starting meanwhile waits for it, as for the operator's CLI). With a PostgreSQL state store the
 * outbox is in that database (its `webhooks` schema): pg_dump of the state store holds it, and a
 * DuckDB file the folder may still have from before is not the outbox, so nothing is copied.
 */
export async function copyOutbox(dataDir: string, target: string, databaseUrl: string | null): Promise<OutboxCopy> {
  if (databaseUrl) return 'in the state dump';
  const paths = pathsFor(dataDir);
  if (!existsSync(paths.outboxFile)) return 'none';
  const answer = (await askOutbox(dataDir, { op: 'copy', to: target }, new Date(), null)) as {
    by: 'by the deliverer' | 'read-only';
  };
  return answer.by;
}
