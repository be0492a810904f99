import { existsSync } from 'node:fs';
import { pathsFor } from '../config.js';
import { askOutbox } from '../webhooks/ask-outbox.js';

/**
 * Copies the webhook outbox into `target` (a new DuckDB file) without stopping the deliverer.
 * DuckDB lets no process open a file another writes, so while the deliverer holds the outbox the
 * request goes over its control socket and the deliverer writes the copy itself, between two of
 * its transactions; when none runs, the outbox is opened read-only here for the copy (a deliverer
 * starting meanwhile waits for it, as for the operator's CLI).
 */
export async function copyOutbox(dataDir: string, target: string): Promise<'by the deliverer' | 'read-only' | 'none'> {
  const paths = pathsFor(dataDir);
  if (!existsSync(paths.outboxFile)) return 'none';
  const answer = (await askOutbox(dataDir, { op: 'copy', to: target }, new Date())) as {
    by: 'by the deliverer' | 'read-only';
  };
  return answer.by;
}
