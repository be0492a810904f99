import { statSync } from 'node:fs';
import { AppStore, keyIdOf, keyIsValid, type App } from '../apps/store.js';
import { hashSecret, hashesEqual } from '../secrets.js';

/**
 * The apps file as the API sees it: re-read when it changes on disk (the operator's CLI writes it
 * by rename), so a rotated or revoked key or a new app counts from the next request, without a
 * restart.
 */
export class AppsCache {
  private apps: App[] = [];
  private stamp = '';

  constructor(private readonly file: string) {}

  /**
   * The app whose API key this is, while the key is valid at `now`, and the key's public id.
   * Every stored hash is compared, in constant time.
   */
  byApiKey(apiKey: string, now: Date): { app: App; keyId: string } | null {
    this.reloadIfChanged();
    const presented = hashSecret(apiKey);
    let found: { app: App; keyId: string } | null = null;
    for (const app of this.apps) {
      for (const key of app.apiKeys) if (hashesEqual(presented, key.hash) && keyIsValid(key, now)) found = { app, keyId: keyIdOf(key) };
    }
    return found;
  }

  private reloadIfChanged(): void {
    // one stat a request (about 8 µs), so that a rotated or revoked key counts from the next request
    const s = statSync(this.file, { throwIfNoEntry: false });
    if (!s) return;
    const stamp = `${s.mtimeMs}:${s.size}:${s.ino}`;
    if (stamp === this.stamp) return;
    this.apps = new AppStore(this.file).list();
    this.stamp = stamp;
  }
}
