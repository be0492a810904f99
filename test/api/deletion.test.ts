import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/server.js';
import { writeDurably, type DurableWrite } from '../../src/purge/requests.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let key: string;
const clock = new Date('2026-11-21T09:00:00Z');

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
});
afterAll(() => ws.cleanup());

const requestFiles = () => (existsSync(ws.paths.deletionsDir) ? readdirSync(ws.paths.deletionsDir).sort() : []);

/** The disk-full fault: every durable write fails as write(2) does when the disk is full. */
function fullDisk(): { write: DurableWrite; full: boolean } {
  const seam = {
    full: true,
    write: ((file, content) => {
      if (seam.full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      writeDurably(file, content);
    }) as DurableWrite,
  };
  return seam;
}

describe('DELETE /v1/org-user/{id}: durable before it is answered', () => {
  it('answers 503 storage_unavailable on a full disk, changes nothing, and a retry deletes', async () => {
    const disk = fullDisk();
    const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50, writeDurably: disk.write });
    try {
      const auth = { authorization: `Bearer ${key}` };
      const issued = (await api.app.inject({ method: 'POST', url: '/v1/org-user/full-disk/token', headers: auth })).json();
      const failed = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth });
      expect(failed.statusCode).toBe(503);
      expect(failed.json()).toEqual({ code: 50302, error: 'storage_unavailable', message: expect.stringContaining('nothing was deleted'), requestId: failed.headers['x-request-id'] });
      expect(failed.body).not.toContain('ENOSPC');
      // the account is unchanged: its token still resolves, and no request was left for the jobs
      expect((await api.app.inject({ method: 'GET', url: `/v1/token/${issued.token}`, headers: auth })).json()).toEqual({ platformUserId: issued.platformUserId, orgUserId: 'full-disk' });
      expect(requestFiles()).toEqual([]);

      disk.full = false;
      const retried = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth });
      expect(retried.statusCode).toBe(200);
      expect(retried.json()).toEqual({ code: 0, message: 'success', platformUserId: issued.platformUserId });
      expect((await api.app.inject({ method: 'GET', url: `/v1/token/${issued.token}`, headers: auth })).statusCode).toBe(404);
      const files = requestFiles();
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/\.json$/);
      expect(JSON.parse(readFileSync(join(ws.paths.deletionsDir, files[0] as string), 'utf8'))).toEqual({
        appId: ws.appId, platformUserId: issued.platformUserId, orgUserId: 'full-disk', requestedAt: clock.toISOString(),
      });
      expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/full-disk', headers: auth })).statusCode).toBe(404);
    } finally {
      await api.close();
      rmSync(ws.paths.deletionsDir, { recursive: true, force: true });
    }
  });

  it('answers 503 when the requests folder cannot be written for real (a file where the folder should be)', async () => {
    const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    try {
      const auth = { authorization: `Bearer ${key}` };
      const issued = (await api.app.inject({ method: 'POST', url: '/v1/org-user/blocked/token', headers: auth })).json();
      mkdirSync(join(ws.paths.deletionsDir, '..'), { recursive: true });
      writeFileSync(ws.paths.deletionsDir, 'not a folder');
      const failed = await api.app.inject({ method: 'DELETE', url: '/v1/org-user/blocked', headers: auth });
      expect(failed.statusCode).toBe(503);
      expect(failed.json()).toMatchObject({ error: 'storage_unavailable' });
      expect((await api.app.inject({ method: 'GET', url: `/v1/token/${issued.token}`, headers: auth })).statusCode).toBe(200);
      rmSync(ws.paths.deletionsDir);
      expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/blocked', headers: auth })).json()).toMatchObject({ code: 0, platformUserId: issued.platformUserId });
      expect(requestFiles()).toHaveLength(1);
    } finally {
      await api.close();
      rmSync(ws.paths.deletionsDir, { recursive: true, force: true });
    }
  });

  it('settles requests a killed API left pending: confirmed when the account was marked, discarded when it is still active', async () => {
    let api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    const auth = { authorization: `Bearer ${key}` };
    const marked = (await api.app.inject({ method: 'POST', url: '/v1/org-user/marked/token', headers: auth })).json();
    const active = (await api.app.inject({ method: 'POST', url: '/v1/org-user/active/token', headers: auth })).json();
    expect((await api.app.inject({ method: 'DELETE', url: '/v1/org-user/marked', headers: auth })).statusCode).toBe(200);
    await api.close();
    // as if the process had died after the mark (before the confirm), and before the mark
    const [confirmed] = requestFiles();
    const dir = ws.paths.deletionsDir;
    writeFileSync(join(dir, `${confirmed}.pending`), readFileSync(join(dir, confirmed as string)));
    rmSync(join(dir, confirmed as string));
    const request = { appId: ws.appId, platformUserId: active.platformUserId, orgUserId: 'active', requestedAt: clock.toISOString() };
    writeFileSync(join(dir, 'z-active.json.pending'), JSON.stringify(request));

    api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
    try {
      expect(requestFiles()).toEqual([confirmed]);
      expect((await api.app.inject({ method: 'GET', url: `/v1/token/${active.token}`, headers: auth })).statusCode).toBe(200);
      expect((await api.app.inject({ method: 'GET', url: `/v1/token/${marked.token}`, headers: auth })).statusCode).toBe(404);
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
