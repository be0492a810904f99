import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../apps/store.js';
import { pathsFor } from '../data-folder.js';
import { askOutbox } from '../webhooks/ask-outbox.js';
import type { OperatorRequest } from '../webhooks/operations.js';

/**
 * `jobs/webhooks.js`: answers an operator request from the outbox. While the deliverer runs it
 * holds the outbox (DuckDB: one writer, no readers beside it), so the request goes to the
 * deliverer over its control socket; otherwise the outbox is opened here.
 */
export async function runWebhooksCommand(
  dataDir: string,
  request: OperatorRequest,
  now = new Date(),
): Promise<unknown> {
  const result = await askOutbox(dataDir, request, now);
  if (request.op !== 'counts') return result;
  // the outbox knows only what the deliverer took in: the jobs' event files still waiting for it,
  // and apps without a URL (whose events wait for ever), are part of what an operator asks
  const paths = pathsFor(dataDir);
  const apps = (await new AppStore(paths.appsFile).list()).map((a) => ({
    appId: a.appId,
    webhookUrl: a.webhookUrl ?? null,
  }));
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
  for (const name of readdirSync(eventsDir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort()) {
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
