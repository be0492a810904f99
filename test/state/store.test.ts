import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { sqliteFileOf } from '../../src/state/db.js';
import { openState } from '../../src/state/open.js';
import { eraseAccounts } from '../../src/state/erase.js';
import { AppStore } from '../../src/apps/store.js';
import { PassportStore } from '../../src/passport/store.js';
import { hashSecret } from '../../src/secrets.js';
import { STORES, stateLocations } from './stores.js';

const DAY = 86_400_000;
const T0 = new Date('2026-11-25T10:00:00.000Z');

describe.each(STORES)('the %s state store', (kind) => {
  const locations = stateLocations(kind);

  it('keeps apps as documents: an added, rotated and revoked key, and fields it does not know of', async () => {
    const where = await locations.fresh();
    const store = new AppStore(where);
    const v0 = await store.version();
    const made = await store.add({ name: 'Fleet Co', timeZone: 'Asia/Tokyo' });
    const rotated = await store.rotateKey(made.appId, { now: T0 });
    expect(await store.version()).toBe(v0 + 2);
    let app = (await store.get(made.appId))!;
    expect(app.apiKeys.map((k) => k.hash)).toEqual([hashSecret(rotated.apiKey), hashSecret(made.apiKey)]);
    expect(app.timeZone).toBe('Asia/Tokyo');
    const revoked = await store.revokeKeys(made.appId, { previous: true }, T0);
    expect(revoked.revoked).toEqual([hashSecret(made.apiKey).slice(0, 12)]);
    app = (await store.get(made.appId))!;
    expect(app.apiKeys.map((k) => k.hash)).toEqual([hashSecret(rotated.apiKey)]);
    // a field added to App later rides along in the document
    await store.setWebhook(made.appId, 'https://example.com/hooks');
    expect((await new AppStore(where).list()).map((a) => [a.name, a.webhookUrl])).toEqual([
      ['Fleet Co', 'https://example.com/hooks'],
    ]);
  });

  it('keeps every secret a rotation replaced, in clear, while it still signs: a retried rotation keeps the first secret', async () => {
    const where = await locations.fresh();
    const store = new AppStore(where);
    const made = await store.add({ name: 'Fleet Co' });
    const first = await store.rotateSecret(made.appId, DAY, T0);
    const second = await store.rotateSecret(made.appId, DAY, new Date(T0.getTime() + 1_400));
    const app = (await new AppStore(where).get(made.appId))!;
    expect(app.appSecret).toBe(second.appSecret);
    expect(app.previousSecrets).toEqual([
      { secret: first.appSecret, validUntil: second.previousValidUntil },
      { secret: made.appSecret, validUntil: first.previousValidUntil },
    ]);
    // a rotation after both windows ended keeps only the secret it replaces
    await store.rotateSecret(made.appId, DAY, new Date(T0.getTime() + 2 * DAY));
    expect((await store.get(made.appId))!.previousSecrets!.map((p) => p.secret)).toEqual([second.appSecret]);
  });

  it('loses no app when many writers add at once', async () => {
    const where = await locations.fresh();
    await Promise.all(Array.from({ length: 8 }, (_, i) => new AppStore(where).add({ name: `app ${i}` })));
    expect((await new AppStore(where).list()).map((a) => a.name).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `app ${i}`),
    );
  });

  it('resolves a token until it expires, only for its app, and never once the account is deleted', async () => {
    const where = await locations.fresh();
    const passport = await PassportStore.open(where);
    const { token, platformUserId } = await passport.issueToken('app_a', 'driver-1', T0, 7 * DAY);
    expect(await passport.tokenOwner(token, T0)).toEqual({ appId: 'app_a', platformUserId, orgUserId: 'driver-1' });
    expect(await passport.tokenHolder('app_b', token, T0)).toBeNull();
    expect(await passport.tokenHolder('app_a', token, new Date(T0.getTime() + 7 * DAY - 1))).toEqual({
      platformUserId,
      orgUserId: 'driver-1',
    });
    expect(await passport.tokenHolder('app_a', token, new Date(T0.getTime() + 7 * DAY))).toBeNull();
    expect(await passport.activeTokens(T0)).toBe(1);
    expect(await passport.markDeleted('app_a', 'driver-1', platformUserId, T0)).toBe(true);
    expect(await passport.markDeleted('app_a', 'driver-1', platformUserId, T0)).toBe(false);
    expect(await passport.tokenOwner(token, T0)).toBeNull();
    expect(await passport.activeAccount('app_a', 'driver-1')).toBeNull();
    expect(await passport.isDeleted('app_a', platformUserId)).toBe(true);
    // a new token makes a new account, never the deleted one's id again
    const again = await passport.issueToken('app_a', 'driver-1', T0, DAY);
    expect(again.platformUserId).not.toBe(platformUserId);
    expect(await passport.activeAccount('app_a', 'driver-1')).toBe(again.platformUserId);
  });

  it('makes one account per user however many writers ask at once', async () => {
    const where = await locations.fresh();
    const stores = await Promise.all([PassportStore.open(where), PassportStore.open(where)]);
    const users = Array.from({ length: 20 }, (_, i) => `u${i}`);
    const results = await Promise.all([
      ...stores.map((s) => s.ensureAccounts('app_a', users, T0)),
      ...users.map((u, i) => stores[i % 2]!.issueToken('app_a', u, T0, DAY)),
    ]);
    const first = results[0] as Map<string, number>;
    for (const other of results.slice(1, 2) as Map<string, number>[]) expect([...other]).toEqual([...first]);
    for (const [i, u] of users.entries())
      expect((results[2 + i] as { platformUserId: number }).platformUserId).toBe(first.get(u));
    expect(await stores[0]!.warmAccounts()).toBe(20);
  });

  it('sweeps expired tokens out of the store', async () => {
    const where = await locations.fresh();
    const passport = await PassportStore.open(where);
    await passport.issueToken('app_a', 'a', T0, DAY);
    await passport.issueToken('app_a', 'b', T0, 2 * DAY);
    expect(await passport.sweepTokens(new Date(T0.getTime() + DAY))).toBe(1);
    expect(await passport.activeTokens(T0)).toBe(1);
  });
});

describe('erasure in the SQLite store', () => {
  const locations = stateLocations('sqlite');

  it("leaves no byte of a purged account's token hashes or user id in the store's files", async () => {
    const where = await locations.fresh();
    const passport = await PassportStore.open(where);
    const orgUserId = 'leaver-7f3a9c21';
    const { token, platformUserId } = await passport.issueToken('app_a', orgUserId, T0, DAY);
    const kept = await passport.issueToken('app_a', 'keeper-55e1', T0, DAY);
    const hash = hashSecret(token);
    const files = () =>
      [sqliteFileOf(where.dataDir), `${sqliteFileOf(where.dataDir)}-wal`].filter((f) => existsSync(f));
    const anywhere = (text: string) => files().some((f) => readFileSync(f).includes(Buffer.from(text)));
    expect(anywhere(hash)).toBe(true);
    expect(await passport.markDeleted('app_a', orgUserId, platformUserId, T0)).toBe(true);
    await eraseAccounts(await openState(where), [{ appId: 'app_a', platformUserId }]);
    expect(anywhere(hash)).toBe(false);
    expect(anywhere(orgUserId)).toBe(false);
    // the other account is untouched
    expect(anywhere(hashSecret(kept.token))).toBe(true);
    expect(await passport.tokenOwner(kept.token, T0)).toMatchObject({ orgUserId: 'keeper-55e1' });
    expect(await passport.isDeleted('app_a', platformUserId)).toBe(true);
  });
});
