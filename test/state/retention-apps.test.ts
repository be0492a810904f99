import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sqliteFileOf } from '../../src/state/db.js';
import { prunePoints } from '../../src/load/retention.js';
import { AppStore, validateWebhookUrl } from '../../src/apps/store.js';
import { hashSecret } from '../../src/secrets.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'dds-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('raw points retention', () => {
  it('removes partitions older than the retention and keeps the rest', () => {
    const dir = tempDir();
    for (const day of ['2026-10-21', '2026-10-22', '2026-11-20']) {
      mkdirSync(join(dir, `trip_date=${day}`));
      writeFileSync(join(dir, `trip_date=${day}`, 'f_0.parquet'), 'x');
    }
    expect(prunePoints(dir, 30, '2026-11-21')).toEqual(['2026-10-21']);
    expect(readdirSync(dir).sort()).toEqual(['trip_date=2026-10-22', 'trip_date=2026-11-20']);
  });
});

describe('apps store', () => {
  it('stores API keys only as hashes and keeps two valid keys across a rotation', async () => {
    const file = join(tempDir(), 'apps.json');
    const store = new AppStore(file);
    const created = await store.add({ name: 'Fleet Co', timeZone: 'Asia/Tokyo' });
    expect(readFileSync(sqliteFileOf(dirname(file))).includes(created.apiKey)).toBe(false);
    const rotated = await store.rotateKey(created.appId);
    const again = await store.rotateKey(created.appId);
    const hashes = (await store.get(created.appId))!.apiKeys.map((k) => k.hash);
    expect(hashes).toEqual([hashSecret(again.apiKey), hashSecret(rotated.apiKey)]);
    expect((await store.get(created.appId))!.timeZone).toBe('Asia/Tokyo');
  });

  it('rejects a bad zone, a non-https webhook, and an unknown app, naming the flag', async () => {
    const store = new AppStore(join(tempDir(), 'apps.json'));
    await expect(store.add({ name: 'x', timeZone: 'Mars/Olympus' })).rejects.toThrow(/--time-zone/);
    expect(() => validateWebhookUrl('http://example.com/hook')).toThrow(/--webhook-url must be https/);
    expect(validateWebhookUrl('http://127.0.0.1:9000/hook')).toBe('http://127.0.0.1:9000/hook');
    await expect(store.setWebhook('app_nope', 'https://example.com')).rejects.toThrow(/no app/);
  });

  it('does not lose an app when two operators add at the same time', async () => {
    const file = join(tempDir(), 'apps.json');
    await Promise.all(Array.from({ length: 8 }, (_, i) => new AppStore(file).add({ name: `app ${i}` })));
    expect(await new AppStore(file).list()).toHaveLength(8);
  });
});
