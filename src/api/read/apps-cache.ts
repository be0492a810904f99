import { keyIdOf, keyIsValid, type App, type AppStore } from '../../apps/store.js';
import { hashSecret, hashesEqual } from '../../secrets.js';

/**
 * The apps as the API sees them: kept in memory and re-read when the apps' version in the shared
 * state store moves (every app write raises it, whichever process makes it), so a rotated or
 * revoked key or a new app counts from the next request to any process.
 */
export class AppsCache {
  private apps: App[] = [];
  private version = -1;

  constructor(private readonly store: AppStore) {}

  /**
   * The app whose API key this is, while the key is valid at `now`, and the key's public id.
   * Every stored hash is compared, in constant time.
   */
  async byApiKey(apiKey: string, now: Date): Promise<{ app: App; keyId: string } | null> {
    await this.reloadIfChanged();
    const presented = hashSecret(apiKey);
    let found: { app: App; keyId: string } | null = null;
    for (const app of this.apps) {
      for (const key of app.apiKeys)
        if (hashesEqual(presented, key.hash) && keyIsValid(key, now)) found = { app, keyId: keyIdOf(key) };
    }
    return found;
  }

  /** The app of this id (its zone, for a passport token's upload), or null. */
  async byId(appId: string): Promise<App | null> {
    await this.reloadIfChanged();
    return this.apps.find((app) => app.appId === appId) ?? null;
  }

  private async reloadIfChanged(): Promise<void> {
    // one read of a one-row table a request, so that a write by any process counts from the next request
    const version = await this.store.version();
    if (version === this.version) return;
    const apps = await this.store.list();
    // the version read before the list: a write in between only causes one more reload
    this.apps = apps;
    this.version = version;
  }
}
