import { existsSync } from 'node:fs';
import { pathsFor } from '../config.js';
import { DatabaseBusyError } from '../db/open.js';
import { InputError } from '../errors.js';
import { Outbox } from '../webhooks/outbox.js';
import { askDeliverer } from '../webhooks/control.js';
import { operate, type OperatorRequest } from '../webhooks/operations.js';

const SOCKET_WAIT_MS = 5_000;

/**
 * `jobs/webhooks.js`: answers an operator request from the outbox. While the deliverer runs it
 * holds the outbox (DuckDB: one writer, no readers beside it), so the request goes to the
 * deliverer over its control socket; otherwise the outbox is opened here.
 */
export async function runWebhooksCommand(dataDir: string, request: OperatorRequest, now = new Date()): Promise<unknown> {
  const paths = pathsFor(dataDir);
  if (!existsSync(paths.outboxFile)) {
    if (request.op === 'list') return { events: [] };
    if (request.op === 'counts') return { counts: [], deliverer: null };
    throw new InputError(`no outbox yet at ${paths.outboxFile}: the deliverer has not run`);
  }
  let outbox: Outbox;
  // a deliverer that is starting holds the outbox a moment before its control socket listens:
  // wait for one or the other rather than fail (seen in CI: `list` right after a start)
  const deadline = Date.now() + SOCKET_WAIT_MS;
  for (;;) {
    try {
      outbox = await Outbox.open(paths.outboxFile, { readOnly: request.op !== 'replay' });
      break;
    } catch (error) {
      if (!(error instanceof DatabaseBusyError)) throw error;
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
