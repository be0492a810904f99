// The example receiver in docs/webhooks.md, run as written against the real deliverer: it accepts
// signed events, refuses forged ones, and records each event id once even when it comes again.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import { authorizationHeader } from '../../src/webhooks/signature.js';
import { operate } from '../../src/webhooks/operations.js';
import { AppStore } from '../../src/apps/store.js';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { appSecret, openDeliverer, setWebhook, testSettings, writeEvents } from './setup.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TMP = join(ROOT, '.vitest-tmp'); // inside the repository, so the example's import resolves

function exampleFromDocs(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'webhooks.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Example receiver'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('no js block under "## Example receiver" in docs/webhooks.md');
  return match[1] as string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

function post(port: number, body: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let ws: Workspace;
let child: ChildProcess | null = null;
beforeEach(async () => {
  ws = await workspace('UTC');
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  ws.cleanup();
});

describe('the example receiver in docs/webhooks.md', () => {
  it('verifies, deduplicates by id across a replay, and refuses a forged request', async () => {
    mkdirSync(TMP, { recursive: true });
    const file = join(TMP, `receiver-${process.pid}.mjs`);
    writeFileSync(file, exampleFromDocs());
    const port = await freePort();
    const dbFile = join(ws.dir, 'received.duckdb');
    // a rotation is under way: the receiver holds the new and the old secret
    const old = await appSecret(ws);
    const { appSecret: fresh } = await new AppStore(ws.paths.appsFile).rotateSecret(ws.appId, 3_600_000);
    child = spawn(process.execPath, [file], {
      env: { ...process.env, APP_SECRET: `${fresh},${old}`, PORT: String(port), RECEIVER_DB: dbFile },
      stdio: 'inherit',
    });
    try {
      for (let i = 0; ; i++) {
        try {
          expect(await post(port, '{}', 'HMAC-SHA256 00')).toBe(401);
          break;
        } catch (error) {
          if (i > 100) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await setWebhook(ws, `http://127.0.0.1:${port}/hooks`);
      writeEvents(ws, 'v1.ndjson', [
        { id: 'evt_r1' },
        { id: 'evt_r2' },
        { id: 'evt_r3', type: 'safety_score.updated' },
      ]);
      const d = await openDeliverer(ws, testSettings());
      try {
        await d.deliverer.runOnce();
        await operate(d.outbox, { op: 'replay', eventId: 'evt_r2' }, new Date());
        await d.deliverer.runOnce();
        expect(await d.outbox.rows('select event_id, status_code from attempts order by attempt, event_id')).toEqual([
          { event_id: 'evt_r1', status_code: 204 },
          { event_id: 'evt_r2', status_code: 204 },
          { event_id: 'evt_r3', status_code: 204 },
          { event_id: 'evt_r2', status_code: 204 },
        ]);
      } finally {
        await d.close();
      }
      const forged = JSON.stringify({
        id: 'evt_direct',
        type: 'trip.created',
        createdAt: new Date().toISOString(),
        appId: ws.appId,
        data: {},
      });
      expect(await post(port, forged, authorizationHeader(forged, 'ds_not_the_secret'))).toBe(401);
      expect(await post(port, forged, authorizationHeader(forged, fresh))).toBe(204);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
      rmSync(file, { force: true });
    }
    const db = await openDatabase(dbFile, { readOnly: true });
    try {
      expect(await query(db.connection, 'select event_id, type from received order by event_id')).toEqual([
        { event_id: 'evt_direct', type: 'trip.created' },
        { event_id: 'evt_r1', type: 'trip.created' },
        { event_id: 'evt_r2', type: 'trip.created' },
        { event_id: 'evt_r3', type: 'safety_score.updated' },
      ]);
    } finally {
      db.close();
    }
  });
});
