import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { hashSecret, newSecret } from '../secrets.js';
import { isValidZone } from '../time.js';
import { InputError } from '../errors.js';
import { isIP } from 'node:net';
import { blockedReason, isLoopbackHost } from '../address-guard.js';
import type { StateDb, StateLocation, StateQueries } from '../state/db.js';
import { openState } from '../state/open.js';
import { previousSecretsOf, type PreviousSecret } from './previous-secrets.js';

/**
 * A tenant (integrator). The AppSecret is kept in clear because the webhook deliverer must sign
 * with it; API keys are kept only as SHA-256 hashes (at most two valid at once, for rotation).
 */
export interface App {
  appId: string;
  name: string;
  timeZone: string;
  createdAt: string;
  apiKeys: ApiKeyEntry[];
  appSecret: string;
  /**
   * The secrets replaced by rotations, newest first, each still signing until its `validUntil`
   * (its rotation plus the grace period): a second rotation within the grace period keeps the
   * first secret signing too.
   */
  previousSecrets?: PreviousSecret[];
  /** The one previous secret as earlier releases kept it; read as part of `previousSecrets`. */
  previousSecret?: PreviousSecret | null;
  webhookUrl: string | null;
  /** Event types the endpoint receives; absent or empty: every type. */
  webhookEventTypes?: string[];
  /** Why the endpoint is disabled and since when (a 410, or days of failures); null: enabled. Setting it enables it. */
  webhookDisabled?: { reason: string; at: string } | null;
  /** Since when every attempt sent to the endpoint has failed; null after a success. */
  webhookFailingSince?: string | null;
}

/** An API key as stored: its hash, never the key. */
export interface ApiKeyEntry {
  hash: string;
  createdAt: string;
  /** The key stops working at this instant (set for a previous key by `rotate-key --expire-previous`). */
  validUntil?: string | null;
}

/** A key's public name (the first 12 hex digits of its hash): what `list` shows and `revoke-key --key-id` takes. */
export const keyIdOf = (key: ApiKeyEntry): string => key.hash.slice(0, 12);

/** Whether a stored key still works at `now`. */
export const keyIsValid = (key: ApiKeyEntry, now: Date): boolean =>
  !key.validUntil || Date.parse(key.validUntil) > now.getTime();

/** Which keys `revoke-key` ends: every key (default), all but the newest, or one named key. */
export type KeySelector = { all: true } | { previous: true } | { keyId: string } | { apiKey: string };

export interface NewAppCredentials {
  appId: string;
  apiKey: string;
  appSecret: string;
}

/**
 * The apps, in the shared state store (src/state): one row per app holding its JSON document, so
 * fields added to `App` need no schema change. Every change is one transaction that raises the
 * apps' version (what the API's cache checks). Given the data folder's apps.json path (the
 * location of earlier releases), it opens that folder's store.
 */
export class AppStore {
  private readonly location: StateLocation;

  constructor(where: string | StateLocation) {
    this.location = typeof where === 'string' ? { dataDir: dirname(where) } : where;
  }

  private state(): Promise<StateDb> {
    return openState(this.location);
  }

  async list(): Promise<App[]> {
    return readApps(await this.state());
  }

  async get(appId: string): Promise<App | null> {
    return (await this.list()).find((app) => app.appId === appId) ?? null;
  }

  /** The apps' change counter: a reader that cached `list()` re-reads when it moved. */
  async version(): Promise<number> {
    const rows = await (await this.state()).all('apps_version');
    return Number(rows[0]?.['version'] ?? 0);
  }

  async add(input: { name: string; timeZone?: string; webhookUrl?: string | null }): Promise<NewAppCredentials> {
    const timeZone = input.timeZone ?? 'UTC';
    if (!input.name.trim()) throw new InputError('--name must not be empty');
    if (!isValidZone(timeZone)) throw new InputError(`--time-zone '${timeZone}' is not an IANA time zone`);
    const webhookUrl = input.webhookUrl ? validateWebhookUrl(input.webhookUrl) : null;
    const apiKey = newSecret('dk_');
    const appSecret = newSecret('ds_');
    const appId = `app_${randomBytes(8).toString('hex')}`;
    const now = new Date().toISOString();
    await this.mutate((apps) => {
      apps.push({
        appId,
        name: input.name.trim(),
        timeZone,
        createdAt: now,
        apiKeys: [{ hash: hashSecret(apiKey), createdAt: now }],
        appSecret,
        webhookUrl,
      });
    });
    return { appId, apiKey, appSecret };
  }

  /**
   * Issues a new key. The newest previous key stays valid so integrators can switch without
   * downtime: until the next rotation, or with `expirePreviousMs` for that long from `now` (0: it
   * ends now). Older keys, and keys already expired, are dropped.
   */
  async rotateKey(
    appId: string,
    options: { expirePreviousMs?: number; now?: Date } = {},
  ): Promise<{ appId: string; apiKey: string; keyId: string; previousValidUntil: string | null }> {
    const now = options.now ?? new Date();
    const apiKey = newSecret('dk_');
    const fresh: ApiKeyEntry = { hash: hashSecret(apiKey), createdAt: now.toISOString(), validUntil: null };
    let previousValidUntil: string | null = null;
    await this.mutate((apps) => {
      const app = findOrThrow(apps, appId);
      const previous = app.apiKeys.filter((k) => keyIsValid(k, now))[0];
      if (previous && options.expirePreviousMs !== undefined) {
        const until = now.getTime() + options.expirePreviousMs;
        // a deadline already set earlier is never pushed back
        if (!previous.validUntil || Date.parse(previous.validUntil) > until)
          previous.validUntil = new Date(until).toISOString();
      }
      previousValidUntil = previous?.validUntil ?? null;
      app.apiKeys = [fresh, ...(previous && keyIsValid(previous, now) ? [previous] : [])];
    });
    return { appId, apiKey, keyId: keyIdOf(fresh), previousValidUntil };
  }

  /**
   * Ends keys now (a leaked key). When the newest key is among them a new one is issued in the
   * same write, so the app is never left without a key; the operator hands it over as at `add`.
   */
  async revokeKeys(
    appId: string,
    which: KeySelector,
    now = new Date(),
  ): Promise<{ appId: string; revoked: string[]; apiKey: string | null; keyId: string | null }> {
    const revoked: string[] = [];
    let issued: { apiKey: string; entry: ApiKeyEntry } | null = null;
    await this.mutate((apps) => {
      const app = findOrThrow(apps, appId);
      const valid = app.apiKeys.filter((k) => keyIsValid(k, now));
      const newest = valid[0];
      const ends = (k: ApiKeyEntry, index: number): boolean =>
        'all' in which
          ? true
          : 'previous' in which
            ? index > 0
            : 'keyId' in which
              ? keyIdOf(k) === which.keyId
              : k.hash === hashSecret(which.apiKey);
      const gone = valid.filter(ends);
      if (gone.length === 0 && ('keyId' in which || 'apiKey' in which)) {
        throw new InputError(
          `no valid key of ${appId} matches ${'keyId' in which ? `--key-id ${which.keyId}` : 'the --key given'}`,
        );
      }
      revoked.push(...gone.map(keyIdOf));
      app.apiKeys = valid.filter((k) => !gone.includes(k));
      if ('all' in which || (newest && gone.includes(newest))) {
        const apiKey = newSecret('dk_');
        issued = { apiKey, entry: { hash: hashSecret(apiKey), createdAt: now.toISOString(), validUntil: null } };
        app.apiKeys.unshift(issued.entry);
      }
    });
    const made = issued as { apiKey: string; entry: ApiKeyEntry } | null;
    return { appId, revoked, apiKey: made?.apiKey ?? null, keyId: made ? keyIdOf(made.entry) : null };
  }

  /**
   * Issues a new AppSecret. The replaced one keeps signing until the grace period ends (see
   * `signingSecrets`), and so does every earlier one still within its own grace period, so a
   * retried rotation does not cut off a receiver holding the first secret. Expired ones are dropped.
   */
  async rotateSecret(
    appId: string,
    graceMs: number,
    now = new Date(),
  ): Promise<{ appId: string; appSecret: string; previousValidUntil: string }> {
    const appSecret = newSecret('ds_');
    const previousValidUntil = new Date(now.getTime() + graceMs).toISOString();
    await this.mutate((apps) => {
      const app = findOrThrow(apps, appId);
      const kept = previousSecretsOf(app).filter((p) => Date.parse(p.validUntil) > now.getTime());
      app.previousSecrets = [{ secret: app.appSecret, validUntil: previousValidUntil }, ...kept];
      delete app.previousSecret;
      app.appSecret = appSecret;
    });
    return { appId, appSecret, previousValidUntil };
  }

  /** Moves the app to another IANA zone: days, weeks and rush hour follow it from the next request. */
  async setTimeZone(appId: string, timeZone: string): Promise<void> {
    if (!isValidZone(timeZone)) throw new InputError(`--time-zone '${timeZone}' is not an IANA time zone`);
    await this.mutate((apps) => {
      findOrThrow(apps, appId).timeZone = timeZone;
    });
  }

  /**
   * Sets (or, with null, removes) the endpoint. Setting it enables it again and starts its
   * failure count afresh; `eventTypes` empty or absent means every type.
   */
  async setWebhook(appId: string, url: string | null, eventTypes: string[] = []): Promise<App> {
    const webhookUrl = url ? validateWebhookUrl(url) : null;
    let updated: App | undefined;
    await this.mutate((apps) => {
      updated = findOrThrow(apps, appId);
      updated.webhookUrl = webhookUrl;
      updated.webhookEventTypes = webhookUrl ? [...new Set(eventTypes)].sort() : [];
      updated.webhookDisabled = null;
      updated.webhookFailingSince = null;
    });
    return updated as App;
  }

  /**
   * The deliverer's word on an endpoint: disables it (with the reason) or notes since when it
   * fails. Ignored when the app's URL is no longer `url`: the integrator changed it meanwhile.
   */
  async noteEndpoint(
    appId: string,
    url: string,
    change: { disabled?: { reason: string; at: string }; failingSince?: string | null },
  ): Promise<void> {
    await this.mutate((apps) => {
      const app = apps.find((a) => a.appId === appId);
      if (!app || app.webhookUrl !== url) return;
      if (change.disabled && !app.webhookDisabled) app.webhookDisabled = change.disabled;
      if (change.failingSince !== undefined) app.webhookFailingSince = change.failingSince;
    });
  }

  private async mutate(change: (apps: App[]) => void): Promise<void> {
    const state = await this.state();
    await state.transaction(async (tx) => {
      const apps = await readApps(tx);
      change(apps);
      for (const app of apps)
        await tx.run('app_upsert', { app_id: app.appId, created_at: app.createdAt, doc: JSON.stringify(app) });
      await tx.run('apps_bump');
    });
  }
}

async function readApps(db: StateQueries): Promise<App[]> {
  return (await db.all('apps_list')).map((row) => JSON.parse(String(row['doc'])) as App);
}

function findOrThrow(apps: App[], appId: string): App {
  const app = apps.find((a) => a.appId === appId);
  if (!app) throw new InputError(`no app with appId '${appId}'`);
  return app;
}

/** https only; plain http is stored for loopback hosts (the deliverer decides whether to use it). */
export function validateWebhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InputError(`--webhook-url '${raw}' is not a URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(host))) {
    throw new InputError(`--webhook-url must be https (plain http only for loopback hosts), got '${raw}'`);
  }
  if (url.username || url.password) throw new InputError('--webhook-url must not carry credentials');
  // an address literal is refused now; names are checked again at every connection
  const refused = isIP(host) !== 0 ? blockedReason(host, true) : null;
  if (refused) throw new InputError(`--webhook-url: ${refused}`);
  return url.toString();
}
