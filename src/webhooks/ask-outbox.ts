import { existsSync } from 'node:fs';
import { pathsFor } from '../data-folder.js';
import { DatabaseBusyError } from '../db/open.js';
import { InputError } from '../errors.js';
import { Outbox } from './outbox.js';
import { askDeliverer } from './control.js';
import { operate, type OperatorRequest } from './operations.js';
import { outboxUrl, sharedPostgresOutbox } from './open-outbox.js';

const SOCKET_WAIT_MS = 5_000;
/**
 * DuckDB's refusal of a file that exists but holds no database yet: a deliverer starting on a new
 * outbox has created the file and not yet written its header (seen with `list` at that moment).
 */
const BEING_CREATED = /exists, but it is not a valid DuckDB database file/;

/**
 * One request to the outbox: through the running deliverer's control socket, or, when none runs,
 * by opening the outbox for this request only. The operator command (jobs/webhooks.js) and the
 * webhook API (integrator.ts) both ask through it. With a database URL the outbox is PostgreSQL's,
 * which every process on every machine reads and writes directly: no socket, no file.
 */
export async function askOutbox(
  dataDir: string,
  request: OperatorRequest,
  now: Date,
  databaseUrl?: string | null,
): Promise<unknown> {
  const url = outboxUrl(databaseUrl);
  const paths = pathsFor(dataDir);
  if (url) {
    // counts also tell the running deliverer's breakers and attempts in flight: this machine's
    // deliverer says them when it runs here (a socket left by a killed one refuses: read directly)
    if (request.op === 'counts' && existsSync(paths.delivererSocket)) {
      const live = await askDeliverer(paths.delivererSocket, request, SOCKET_WAIT_MS).catch(() => null);
      if (live) return live;
    }
    return operate(await sharedPostgresOutbox(url), request, now);
  }
  if (!existsSync(paths.outboxFile)) {
    if (request.op === 'list') return { events: [] };
    if (request.op === 'recover') return { queued: [] };
    if (request.op === 'counts') return { counts: [], deliverer: null };
    if (request.op === 'backlog') return { backlog: 0 };
    throw new InputError(`no outbox yet at ${paths.outboxFile}: the deliverer has not run`);
  }
  let outbox: Outbox;
  // a deliverer that is starting holds the outbox (or is still writing a new one's first bytes) a
  // moment before its control socket listens: wait for one or the other rather than fail (seen in
  // CI: `list` right after a start); a file that stays unreadable fails at the deadline
  const deadline = Date.now() + SOCKET_WAIT_MS;
  for (;;) {
    try {
      outbox = await Outbox.open(paths.outboxFile, { readOnly: request.op !== 'replay' && request.op !== 'recover' });
      break;
    } catch (error) {
      const starting =
        error instanceof DatabaseBusyError || (error instanceof Error && BEING_CREATED.test(error.message));
      if (!starting) throw error;
      if (existsSync(paths.delivererSocket)) return askDeliverer(paths.delivererSocket, request);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await operate(outbox, request, now);
  } finally {
    await outbox.close();
  }
}
