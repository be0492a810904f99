import type { App } from '../apps/store.js';

/**
 * Attempts taken from the outbox and waiting in memory, per app and overall. Deep enough that a
 * fast receiver never waits for the next turn of the loop (each turn is a transaction and a query),
 * small enough to bound memory (bodies are a few hundred bytes).
 */
export const DEPTH_PER_APP = 500;
export const DEPTH_OVERALL = 5_000;
/** Finished attempts that make the loop record them at once instead of at its next turn. */
export const FLUSH_AT = 256;

/** Whether the app's endpoint takes events of this type (none listed: every type). */
export function wants(app: App, eventType: string): boolean {
  return !app.webhookEventTypes || app.webhookEventTypes.length === 0 || app.webhookEventTypes.includes(eventType);
}

export function asciiOnly(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

/** Attempts are shown to operators: a URL's query string may carry a receiver's token. */
export function redactUrl(url: string): string {
  const u = new URL(url);
  return u.search ? `${u.origin}${u.pathname}?…` : `${u.origin}${u.pathname}`;
}
