// Two serve.js processes on one state store, as two machines would run them (PostgreSQL: each
// with a data folder of its own), for both stores: a token issued by one resolves at the other, a
// DELETE answered by one refuses the token at the other's next request, and a key revoked by the
// operator's CLI is refused by both at once while the new key works on both.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { STORES, serveProcesses, stateLocations } from './stores.js';

const ROOT = join(import.meta.dirname, '..', '..');

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout }));
  });
}

describe.each(STORES)('two API processes on the %s store', (kind) => {
  const locations = stateLocations(kind);
  const machines = serveProcesses();

  it("see each other's writes at the next request: tokens, deletions and revoked keys", async () => {
    const where = await locations.fresh();
    const { appId, apiKey } = await new AppStore(where).add({ name: 'Fleet', timeZone: 'UTC' });
    // PostgreSQL: a data folder per process, as on two machines; SQLite: the machine's one folder
    const a = await machines.start(where);
    const b = await machines.start(where, true);
    const call = (s: ServeProcess, path: string, key: string, method = 'GET') =>
      fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });

    const issued = await call(a, '/v1/org-user/driver-1/token', apiKey, 'POST');
    expect(issued.status).toBe(200);
    const { token } = (await issued.json()) as { token: string };
    expect(await (await call(b, `/v1/token/${token}`, apiKey)).json()).toMatchObject({ orgUserId: 'driver-1' });

    expect((await call(b, '/v1/org-user/driver-1', apiKey, 'DELETE')).status).toBe(200);
    expect((await call(a, `/v1/token/${token}`, apiKey)).status).toBe(404);
    expect((await call(b, `/v1/token/${token}`, apiKey)).status).toBe(404);

    // the job is told the store by its flag alone (DATABASE_URL emptied)
    const flag = where.databaseUrl ? ['--database-url', where.databaseUrl] : [];
    const revoked = await cli(['jobs/apps.js', 'revoke-key', appId, '--data-dir', where.dataDir, '--json', ...flag], {
      DATABASE_URL: '',
    });
    expect(revoked.code).toBe(0);
    const fresh = /"apiKey":\s*"(dk_[^"]+)"/.exec(revoked.stdout)?.[1] as string;
    expect(fresh).toMatch(/^dk_/);
    for (const s of [a, b]) {
      expect((await call(s, '/v1/org-user/driver-2/token', apiKey, 'POST')).status).toBe(401);
      expect((await call(s, '/v1/org-user/driver-2/token', fresh, 'POST')).status).toBe(200);
    }
  });
});
