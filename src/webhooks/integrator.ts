import { AppStore, type App } from '../apps/store.js';
import { previousSecretsUntil } from '../apps/previous-secrets.js';
import { pathsFor } from '../data-folder.js';
import { InputError } from '../errors.js';
import { askOutbox } from './ask-outbox.js';
import type { Row } from '../db/sql.js';
import { explainedRefusal, type ResolveAll } from './endpoint-check.js';
import { testEventBody } from './envelope.js';
import type { OperatorRequest } from './operations.js';
import type { EventStatus } from './outbox.js';
import { Sender } from './send.js';
import type { DeliverySettings } from './delivery-settings.js';
import { deliveryHeaders, signingSecrets, standardWebhooksSecret } from './signature.js';

/** An app's endpoint as the integrator sees it. */
export interface EndpointView {
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  /** Until when the last previous AppSecret still signs (after rotations), or null. */
  previousSecretValidUntil: string | null;
}

/** One event's delivery as the integrator sees it. */
export interface DeliveryView {
  eventId: string;
  eventType: string;
  status: EventStatus;
  /** Attempts actually sent (the X-Delivery-Attempt of the last one). */
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  /** When the next attempt is due (a retry or a re-send), or null. */
  nextAttemptAt: string | null;
  createdAt: string;
}

/** The rotation's grace period (docs/decisions.md, Webhooks (delivery)): both secrets sign for 24 hours. */
const ROTATION_GRACE_MS = 24 * 3_600_000;

/**
 * What an integrator may do with its own webhooks (docs/decisions.md, Webhooks (delivery), "Integrators manage their own
 * webhooks"), for the API. Settings live in the app's record (AppStore). The outbox stays the
 * deliverer's: deliveries, re-sends and recovery go to it through its control socket (or, when no
 * deliverer runs, to the outbox opened for the one request, one at a time), as the operator CLI
 * does. The test event is sent from here, signed as every event, and not stored.
 */
export class WebhookService {
  private readonly store: AppStore;
  private readonly sender: Sender;
  private outboxTail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly settings: DeliverySettings,
    private readonly resolveAll?: ResolveAll,
    /** The shared store's PostgreSQL URL, where the outbox is too; default DATABASE_URL, else none. */
    private readonly databaseUrl?: string | null,
  ) {
    this.store = new AppStore(
      databaseUrl === undefined ? pathsFor(dataDir).appsFile : { dataDir, databaseUrl: databaseUrl },
    );
    this.sender = new Sender({ ...settings, perEndpoint: 1 });
  }

  /** The app's endpoint, or null when none is set. */
  async endpoint(appId: string): Promise<EndpointView | null> {
    const app = await this.store.get(appId);
    return app?.webhookUrl ? viewOf(app) : null;
  }

  /**
   * Sets the endpoint after checking its URL; setting enables a disabled endpoint again. The
   * events kept meanwhile are sent to it (docs/decisions.md, Webhooks (delivery)): `backlog` says
   * how many, counted before the URL is stored (the deliverer may start at once), or null when
   * the outbox could not be asked (the endpoint is set all the same).
   */
  async setEndpoint(
    appId: string,
    url: string,
    eventTypes: string[],
    now = new Date(),
  ): Promise<EndpointView & { backlog: number | null }> {
    const refusal = await explainedRefusal(url, {
      allowLoopback: this.settings.allowLoopback,
      ...(this.resolveAll ? { resolveAll: this.resolveAll } : {}),
    });
    if (refusal) throw new InputError(refusal);
    const types = [...new Set(eventTypes)];
    const backlog = await this.outbox({ op: 'backlog', appId, eventTypes: types }, now).then(
      (r) => (r as { backlog: number }).backlog,
      () => null,
    );
    return { ...viewOf(await this.store.setWebhook(appId, url, eventTypes)), backlog };
  }

  /** Removes the endpoint; its events wait (for the retention) until one is set again. */
  async removeEndpoint(appId: string): Promise<boolean> {
    const had = (await this.store.get(appId))?.webhookUrl != null;
    if (had) await this.store.setWebhook(appId, null);
    return had;
  }

  /** Sends one `webhook.test` event now and tells how the receiver answered; null without an endpoint. */
  async sendTest(
    appId: string,
    now: Date,
  ): Promise<{
    eventId: string;
    delivered: boolean;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  } | null> {
    const app = await this.store.get(appId);
    if (!app?.webhookUrl) return null;
    const { id, body } = testEventBody(appId, now);
    const result = await this.sender.send({
      url: app.webhookUrl,
      body,
      headers: deliveryHeaders({ id, type: 'webhook.test' }, body, 1, signingSecrets(app, now), now),
    });
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    return {
      eventId: id,
      delivered,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
    };
  }

  /** The app's events, newest first, `limit` at a time; `beforeSeq` continues after a page. */
  async deliveries(
    appId: string,
    query: { status: EventStatus | null; limit: number; beforeSeq: number | null },
    now: Date,
  ): Promise<{ deliveries: DeliveryView[]; lastSeq: number | null; more: boolean }> {
    const { events } = (await this.outbox(
      { op: 'list', appId, status: query.status, limit: query.limit + 1, beforeSeq: query.beforeSeq },
      now,
    )) as { events: Row[] };
    const page = events.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      deliveries: page.map(deliveryOf),
      lastSeq: last ? Number(last['seq']) : null,
      more: events.length > query.limit,
    };
  }

  /** Queues one more attempt of the app's event; null when the app has no such event. */
  async resend(appId: string, eventId: string, now: Date): Promise<string[] | null> {
    try {
      return ((await this.outbox({ op: 'replay', eventId, appId }, now)) as { queued: string[] }).queued;
    } catch (error) {
      // no such event for this app, or no outbox yet (the deliverer never ran): either way not found
      if (error instanceof InputError && /^no (event|outbox)/.test(error.message)) return null;
      throw error;
    }
  }

  /** Queues one more attempt of every delivered or dead event of the app created since `since`. */
  async recover(appId: string, since: Date, now: Date): Promise<string[]> {
    return ((await this.outbox({ op: 'recover', appId, since: since.toISOString() }, now)) as { queued: string[] })
      .queued;
  }

  /** A new AppSecret, shown once; the previous one keeps signing for 24 hours. */
  async rotateSecret(
    appId: string,
    now: Date,
  ): Promise<{ appSecret: string; standardWebhooksSecret: string; previousSecretValidUntil: string }> {
    const rotated = await this.store.rotateSecret(appId, ROTATION_GRACE_MS, now);
    return {
      appSecret: rotated.appSecret,
      standardWebhooksSecret: standardWebhooksSecret(rotated.appSecret),
      previousSecretValidUntil: rotated.previousValidUntil,
    };
  }

  close(): void {
    this.sender.close();
  }

  /**
   * One outbox request at a time from this process: two would contend for the DuckDB file when no
   * deliverer runs (PostgreSQL's outbox would not mind; one at a time keeps a single behaviour).
   */
  private outbox(request: OperatorRequest, now: Date): Promise<unknown> {
    const run = this.outboxTail.then(() => askOutbox(this.dataDir, request, now, this.databaseUrl));
    this.outboxTail = run.catch(() => undefined);
    return run;
  }
}

function viewOf(app: App): EndpointView {
  return {
    url: app.webhookUrl as string,
    eventTypes: app.webhookEventTypes ?? [],
    enabled: !app.webhookDisabled,
    disabledReason: app.webhookDisabled?.reason ?? null,
    disabledAt: app.webhookDisabled?.at ?? null,
    failingSince: app.webhookFailingSince ?? null,
    previousSecretValidUntil: previousSecretsUntil(app),
  };
}

function deliveryOf(row: Row): DeliveryView {
  return {
    eventId: String(row['event_id']),
    eventType: String(row['event_type']),
    status: row['status'] as EventStatus,
    attempts: Number(row['sent_attempts'] ?? row['attempt_count']),
    lastResponseCode: row['last_status_code'] == null ? null : Number(row['last_status_code']),
    lastError: row['last_error'] == null ? null : String(row['last_error']),
    lastAttemptAt: (row['last_attempt_at'] as string | null) ?? null,
    nextAttemptAt: (row['next_attempt_at'] as string | null) ?? null,
    createdAt: String(row['created_at']),
  };
}
