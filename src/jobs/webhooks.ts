import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../apps/store.js';
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
  const result = await askOutbox(dataDir, request, now);
  if (request.op !== 'counts') return result;
  // the outbox knows only what the deliverer took in: the jobs' event files still waiting for it,
  // and apps without a URL (whose events wait for ever), are part of what an operator asks
  const paths = pathsFor(dataDir);
  const apps = (await new AppStore(paths.appsFile).list()).map((a) => ({ appId: a.appId, webhookUrl: a.webhookUrl ?? null }));
  return { ...(result as Record<string, unknown>), waiting: waitingEventFiles(paths.eventsDir), apps };
}

export interface WaitingEvents {
  /** Event files the jobs wrote that the deliverer has not taken in yet. */
  files: number;
  events: number;
  byApp: Record<string, number>;
}

/** Counts the events in `events/pending/*.ndjson` (one JSON object per line), per app. */
export function waitingEventFiles(eventsDir: string): WaitingEvents {
  const waiting: WaitingEvents = { files: 0, events: 0, byApp: {} };
  if (!existsSync(eventsDir)) return waiting;
  for (const name of readdirSync(eventsDir).filter((n) => n.endsWith('.ndjson')).sort()) {
    let text: string;
    try {
      text = readFileSync(join(eventsDir, name), 'utf8');
    } catch {
      continue; // taken in (and removed) by the deliverer meanwhile
    }
    waiting.files++;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      waiting.events++;
      let appId = '?';
      try {
        appId = String((JSON.parse(line) as { appId?: unknown }).appId ?? '?');
      } catch {
        // a line the deliverer will reject: still counted as waiting
      }
      waiting.byApp[appId] = (waiting.byApp[appId] ?? 0) + 1;
    }
  }
  return waiting;
}

/**
 * One request to the outbox: through the running deliverer's control socket, or, when none runs,
 * by opening the outbox for this request only (the webhook API does the same).
 */
export async function askOutbox(dataDir: string, request: OperatorRequest, now: Date): Promise<unknown> {
  const paths = pathsFor(dataDir);
  if (!existsSync(paths.outboxFile)) {
    if (request.op === 'list') return { events: [] };
    if (request.op === 'recover') return { queued: [] };
    if (request.op === 'counts') return { counts: [], deliverer: null };
    throw new InputError(`no outbox yet at ${paths.outboxFile}: the deliverer has not run`);
  }
  let outbox: Outbox;
  // a deliverer that is starting holds the outbox a moment before its control socket listens:
  // wait for one or the other rather than fail (seen in CI: `list` right after a start)
  const deadline = Date.now() + SOCKET_WAIT_MS;
  for (;;) {
    try {
      outbox = await Outbox.open(paths.outboxFile, { readOnly: request.op !== 'replay' && request.op !== 'recover' });
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
