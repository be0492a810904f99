import type { App, AppStore } from '../apps/store.js';
import type { Progress } from '../progress.js';
import type { SendResult } from './send.js';

/**
 * What attempts say about an endpoint (docs/decisions.md, Webhooks (delivery)): an answer of 410 disables it at once; an
 * endpoint that failed every attempt sent to it for `disableAfterMs` is disabled; a success ends
 * the failure streak. The state lives in the app's record (AppStore), written only when it
 * changes; the writes go one after the other, off the delivery path.
 */
export class EndpointHealth {
  /** What was last written per app and URL, so an unchanged state is not written again. */
  private readonly failingSince = new Map<string, string | null>();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: AppStore,
    private readonly disableAfterMs: number,
    private readonly progress: Progress,
  ) {}

  /** Notes one attempt that was sent (or refused by the address guard); skipped ones are not. */
  note(app: App, url: string, result: SendResult, startedAt: Date, finishedAt: Date): void {
    const key = `${app.appId} ${url}`;
    const known = this.failingSince.has(key) ? this.failingSince.get(key) : (app.webhookFailingSince ?? null);
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    if (ok) {
      if (known !== null) this.write(key, app.appId, url, { failingSince: null });
      return;
    }
    if (result.statusCode === 410) {
      this.write(key, app.appId, url, {
        disabled: { reason: 'the endpoint answered 410 Gone', at: finishedAt.toISOString() },
      });
      return;
    }
    if (known === null || known === undefined) {
      this.write(key, app.appId, url, { failingSince: startedAt.toISOString() });
      return;
    }
    if (finishedAt.getTime() - Date.parse(known) >= this.disableAfterMs) {
      const days = Math.round((this.disableAfterMs / 86_400_000) * 10) / 10;
      this.write(key, app.appId, url, {
        disabled: {
          reason:
            `every attempt failed for ${days} days (since ${known}); the last: ${result.error ?? 'no answer'}`.slice(
              0,
              300,
            ),
          at: finishedAt.toISOString(),
        },
      });
    }
  }

  /** Resolves when every write asked for so far is done. */
  settled(): Promise<void> {
    return this.tail;
  }

  private write(
    key: string,
    appId: string,
    url: string,
    change: { disabled?: { reason: string; at: string }; failingSince?: string | null },
  ): void {
    if (change.failingSince !== undefined) this.failingSince.set(key, change.failingSince);
    if (change.disabled) this.failingSince.delete(key);
    if (change.disabled) this.progress(`deliver: endpoint of ${appId} disabled: ${change.disabled.reason}`);
    this.tail = this.tail
      .then(() => this.store.noteEndpoint(appId, url, change))
      .catch((error: unknown) => {
        // the next attempt writes it again: a lost note delays a disable, it never loses an event
        this.failingSince.delete(key);
        this.progress(
          `deliver: could not record the endpoint state of ${appId}: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
  }
}
