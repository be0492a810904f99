// The webhook API as integrators use it: the endpoint set, refused and removed; the test event; the
// deliveries listed, one event re-sent and a time range recovered end to end through the
// deliverer process (the API asks it over its control socket; when it is stopped, the outbox is
// opened for the one request); every delivery verified with the standardwebhooks package through
// a secret rotation made with the API.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { standardWebhooksSecret } from '../../src/webhooks/signature.js';
import type { Received } from '../helpers/receiver.js';
import type { Workspace } from '../helpers/workspace.js';
import { appSecret, manualClock, openDeliverer, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const ROOT = join(import.meta.dirname, '..', '..');
const fixture = useWebhookWorkspace();
let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>> | null = null;
let key: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  ws = fixture.ws();
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await api?.close();
  api = null;
});

async function openApi(options: { allowLoopback: boolean; now?: () => Date }) {
  api = await createApi({
    dataDir: ws.dir,
    pollMs: 1_000,
    webhookSettings: { allowLoopback: options.allowLoopback, timeoutMs: 2_000 },
    ...(options.now ? { now: options.now } : {}),
  });
  const call = async (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, body?: unknown, apiKey = key) => {
    const res = await (api as NonNullable<typeof api>).app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.body ? res.json() : null };
  };
  return call;
}

/** Verifies one delivery as a Standard Webhooks receiver holding `secret` would, at the time it was signed. */
function verifiesWith(got: Received, secret: string): boolean {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Number(got.headers['webhook-timestamp']) * 1000);
  try {
    new Webhook(standardWebhooksSecret(secret)).verify(got.rawBody.toString('utf8'), {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    return true;
  } catch {
    return false;
  } finally {
    vi.useRealTimers();
  }
}

const authorizationFor = (got: Received, secret: string) =>
  `HMAC-SHA256 ${createHmac('sha256', Buffer.from(secret, 'utf8')).update(got.rawBody).digest('hex')}`;

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a refusal of a loopback host adds: the operator's switch, for local testing. */
const LOOPBACK =
  ' (for local testing, the operator allows loopback hosts (and plain http to them) with DRIVING_WEBHOOK_ALLOW_LOOPBACK=1 on the API, the deliverer and apps.js)';

describe('the endpoint', () => {
  it('is set, read, refused with a 400 naming the reason, and removed; without one, 404', async () => {
    const call = await openApi({ allowLoopback: false });
    expect((await call('GET', '/v1/webhooks/endpoint')).status).toBe(404);
    for (const [url, reason] of [
      ['http://127.0.0.1:9000/x', `url: must be https${LOOPBACK}`],
      ['https://127.0.0.1/x', `url: 127.0.0.1 is a loopback address${LOOPBACK}`],
      ['https://localhost/x', `url: localhost resolves to 127.0.0.1, a loopback address${LOOPBACK}`],
      ['https://[::1]/x', `url: ::1 is a loopback address${LOOPBACK}`],
      ['https://10.0.0.1/x', 'url: 10.0.0.1 is a private address'],
      ['https://172.16.5.4/x', 'url: 172.16.5.4 is a private address'],
      ['https://192.168.0.10/x', 'url: 192.168.0.10 is a private address'],
      ['https://169.254.169.254/latest/meta-data/', 'url: 169.254.169.254 is a cloud metadata address'],
      ['https://[fd00::1]/x', 'url: fd00::1 is a unique-local address'],
      ['https://[fe80::1]/x', 'url: fe80::1 is a link-local address'],
      [
        'https://metadata.google.internal/computeMetadata/v1/',
        'url: metadata.google.internal is a cloud metadata address',
      ],
    ]) {
      const res = await call('PUT', '/v1/webhooks/endpoint', { url });
      expect(res, url).toMatchObject({
        status: 400,
        body: { code: 40001, error: 'invalid_parameter', message: reason },
      });
    }
    expect(
      (await call('PUT', '/v1/webhooks/endpoint', { url: 'https://93.184.215.14/x', eventTypes: ['trip.deleted'] }))
        .body.message,
    ).toMatch(/^eventTypes\/0: /);
    expect(
      await call('PUT', '/v1/webhooks/endpoint', { url: 'https://93.184.215.14/hook', eventTypes: ['trip.created'] }),
    ).toMatchObject({
      status: 200,
      body: { url: 'https://93.184.215.14/hook', eventTypes: ['trip.created'], enabled: true, disabledReason: null },
    });
    expect(await new AppStore(ws.paths.appsFile).get(ws.appId)).toMatchObject({
      webhookUrl: 'https://93.184.215.14/hook',
      webhookEventTypes: ['trip.created'],
    });
    expect((await call('GET', '/v1/webhooks/endpoint')).body.url).toBe('https://93.184.215.14/hook');
    // another app sees its own (none)
    const other = await new AppStore(ws.paths.appsFile).add({ name: 'other' });
    expect((await call('GET', '/v1/webhooks/endpoint', undefined, other.apiKey)).status).toBe(404);
    expect(await call('DELETE', '/v1/webhooks/endpoint')).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await call('DELETE', '/v1/webhooks/endpoint')).status).toBe(404);
    expect((await call('GET', '/v1/webhooks/endpoint', undefined, 'dk_wrong')).status).toBe(401);
  });

  it('says in the answer how many kept events are now sent to it (backlog), of the types it takes', async () => {
    const r = await fixture.receiver(() => ({ status: 204 }));
    const call = await openApi({ allowLoopback: true });
    // no outbox yet: nothing kept
    expect((await call('PUT', '/v1/webhooks/endpoint', { url: r.url })).body).toMatchObject({ url: r.url, backlog: 0 });
    await call('DELETE', '/v1/webhooks/endpoint');
    writeEvents(ws, 'kept.ndjson', [{ id: 'evt_k1' }, { id: 'evt_k2' }, { id: 'evt_k3', type: 'trip.updated' }]);
    const kept = await openDeliverer(ws, testSettings());
    try {
      await kept.deliverer.runOnce();
    } finally {
      await kept.close();
    }
    expect(r.received).toHaveLength(0);
    // every type: all three kept events
    expect((await call('PUT', '/v1/webhooks/endpoint', { url: r.url })).body).toMatchObject({ backlog: 3 });
    expect(await call('PUT', '/v1/webhooks/endpoint', { url: r.url, eventTypes: ['trip.created'] })).toMatchObject({
      status: 200,
      body: { url: r.url, eventTypes: ['trip.created'], backlog: 2 },
    });
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
    } finally {
      await d.close();
    }
    expect(r.received.map((x) => x.headers['x-event-id']).sort()).toEqual(['evt_k1', 'evt_k2']);
  });

  it('shows why it was disabled, and setting it enables it again', async () => {
    const call = await openApi({ allowLoopback: true });
    await call('PUT', '/v1/webhooks/endpoint', { url: 'http://127.0.0.1:9/x' });
    await new AppStore(ws.paths.appsFile).noteEndpoint(ws.appId, 'http://127.0.0.1:9/x', {
      disabled: { reason: 'the endpoint answered 410 Gone', at: '2026-11-25T10:00:00.000Z' },
    });
    expect((await call('GET', '/v1/webhooks/endpoint')).body).toMatchObject({
      enabled: false,
      disabledReason: 'the endpoint answered 410 Gone',
      disabledAt: '2026-11-25T10:00:00.000Z',
    });
    expect((await call('PUT', '/v1/webhooks/endpoint', { url: 'http://127.0.0.1:9/x' })).body).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
  });
});

describe('the test event', () => {
  it("is sent signed, verified by the standardwebhooks package, and answered with the receiver's status", async () => {
    const r = await fixture.receiver((req) => ({ status: req.index === 0 ? 204 : 503 }));
    const call = await openApi({ allowLoopback: true });
    expect((await call('POST', '/v1/webhooks/endpoint/test')).status).toBe(404);
    await call('PUT', '/v1/webhooks/endpoint', { url: r.url });
    const ok = await call('POST', '/v1/webhooks/endpoint/test');
    expect(ok).toMatchObject({ status: 200, body: { delivered: true, statusCode: 204, error: null } });
    const got = r.received[0] as Received;
    expect(verifiesWith(got, await appSecret(ws))).toBe(true);
    expect(JSON.parse(got.rawBody.toString('utf8'))).toMatchObject({
      id: ok.body.eventId,
      type: 'webhook.test',
      version: '2026-11-28',
      appId: ws.appId,
    });
    expect(got.headers['authorization']).toBe(authorizationFor(got, await appSecret(ws)));
    expect(await call('POST', '/v1/webhooks/endpoint/test')).toMatchObject({
      status: 200,
      body: { delivered: false, statusCode: 503, error: 'HTTP 503' },
    });
  });
});

describe('deliveries, resend and recover', () => {
  it('go through the running deliverer end to end, scoped to the app, with cursor paging; and work with the deliverer stopped', async () => {
    const r = await fixture.receiver(() => ({ status: 500 }));
    const call = await openApi({ allowLoopback: true });
    await call('PUT', '/v1/webhooks/endpoint', { url: r.url });
    const other = await new AppStore(ws.paths.appsFile).add({ name: 'other' });
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_one' }, { id: 'evt_two' }, { id: 'evt_other', appId: other.appId }]);
    const child = spawn(process.execPath, ['jobs/deliver.js', '--data-dir', ws.dir], {
      cwd: ROOT,
      env: {
        ...process.env,
        DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
        DRIVING_WEBHOOK_POLL: '50ms',
        DRIVING_WEBHOOK_TIMEOUT: '2s',
        DRIVING_WEBHOOK_SCHEDULE: '100ms',
      },
    });
    children.push(child);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // one retry, then dead letters
    await until(async () => {
      const res = await call('GET', '/v1/webhooks/deliveries?status=failed');
      return res.status === 200 && res.body.deliveries.length === 2;
    });
    const all = (await call('GET', '/v1/webhooks/deliveries')).body.deliveries;
    expect(all.map((d: { eventId: string }) => d.eventId)).toEqual(['evt_two', 'evt_one']);
    expect(all[0]).toMatchObject({
      eventType: 'trip.created',
      status: 'failed',
      attempts: 2,
      lastResponseCode: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
    });
    const first = (await call('GET', '/v1/webhooks/deliveries?limit=1')).body;
    expect(first.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual(['evt_two']);
    const second = (
      await call('GET', `/v1/webhooks/deliveries?limit=1&nextCursor=${encodeURIComponent(first.nextCursor)}`)
    ).body;
    expect(second).toEqual({ deliveries: [expect.objectContaining({ eventId: 'evt_one' })] });
    expect(
      (await call('GET', `/v1/webhooks/deliveries?status=delivered&nextCursor=${encodeURIComponent(first.nextCursor)}`))
        .status,
    ).toBe(400);
    expect(
      (await call('GET', '/v1/webhooks/deliveries', undefined, other.apiKey)).body.deliveries.map(
        (d: { eventId: string }) => d.eventId,
      ),
    ).toEqual(['evt_other']);

    r.setBehaviour(() => ({ status: 200 }));
    const before = r.received.length;
    expect(await call('POST', '/v1/webhooks/deliveries/evt_one/resend')).toMatchObject({
      status: 202,
      body: { queued: ['evt_one'] },
    });
    await r.waitFor(before + 1);
    const resent = r.received[before] as Received;
    expect(resent.headers['x-event-id']).toBe('evt_one');
    expect(resent.headers['x-delivery-attempt']).toBe('3');
    expect(verifiesWith(resent, await appSecret(ws))).toBe(true);
    await until(
      async () => (await call('GET', '/v1/webhooks/deliveries?status=delivered')).body.deliveries.length === 1,
    );
    expect((await call('POST', '/v1/webhooks/deliveries/evt_other/resend')).status).toBe(404);
    expect((await call('POST', '/v1/webhooks/deliveries/evt_nope/resend')).status).toBe(404);

    expect((await call('POST', '/v1/webhooks/recover', { since: 'yesterday' })).body.message).toMatch(/^since: /);
    expect(await call('POST', '/v1/webhooks/recover', { since: '2026-11-01' })).toMatchObject({
      status: 202,
      body: { queued: 2 },
    });
    await r.waitFor(before + 3);
    expect(
      r.received
        .slice(before + 1)
        .map((x) => x.headers['x-event-id'])
        .sort(),
    ).toEqual(['evt_one', 'evt_two']);
    await until(
      async () => (await call('GET', '/v1/webhooks/deliveries?status=delivered')).body.deliveries.length === 2,
    );

    child.kill('SIGTERM');
    await exited;
    // stopped: the outbox is opened for the request
    expect(
      (await call('GET', '/v1/webhooks/deliveries')).body.deliveries.map((d: { status: string }) => d.status),
    ).toEqual(['delivered', 'delivered']);
  });
});

describe('a secret rotation made with the API', () => {
  it('signs with both secrets for 24 hours (Authorization with the old one), then with the new one only; every delivery verified by the standardwebhooks package', async () => {
    const r = await fixture.receiver(() => ({ status: 204 }));
    const start = new Date();
    const clock = manualClock(start.toISOString());
    const call = await openApi({ allowLoopback: true, now: clock.now });
    await call('PUT', '/v1/webhooks/endpoint', { url: r.url });
    const oldSecret = await appSecret(ws);
    const d = await openDeliverer(ws, testSettings(), clock.now);
    try {
      writeEvents(ws, 'v1.ndjson', [{ id: 'evt_before' }]);
      await d.deliverer.runOnce();
      const rotated = await call('POST', '/v1/webhooks/secret/rotate');
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.appSecret as string;
      expect(rotated.body.standardWebhooksSecret).toBe(`whsec_${Buffer.from(newSecret, 'utf8').toString('base64')}`);
      expect(rotated.body.previousSecretValidUntil).toBe(new Date(start.getTime() + 24 * 3_600_000).toISOString());
      expect((await call('GET', '/v1/webhooks/endpoint')).body.previousSecretValidUntil).toBe(
        rotated.body.previousSecretValidUntil,
      );
      clock.advance(3_600_000);
      writeEvents(ws, 'v2.ndjson', [{ id: 'evt_during' }]);
      await d.deliverer.runOnce();
      clock.advance(23 * 3_600_000 + 1_000);
      writeEvents(ws, 'v3.ndjson', [{ id: 'evt_after' }]);
      await d.deliverer.runOnce();
      const [before, during, after] = r.received as [Received, Received, Received];
      expect([before, during, after].map((x) => x.headers['x-event-id'])).toEqual([
        'evt_before',
        'evt_during',
        'evt_after',
      ]);
      expect([verifiesWith(before, oldSecret), verifiesWith(before, newSecret)]).toEqual([true, false]);
      expect([verifiesWith(during, oldSecret), verifiesWith(during, newSecret)]).toEqual([true, true]);
      expect(during.headers['authorization']).toBe(authorizationFor(during, oldSecret));
      expect([verifiesWith(after, oldSecret), verifiesWith(after, newSecret)]).toEqual([false, true]);
      expect(after.headers['authorization']).toBe(authorizationFor(after, newSecret));
      expect(JSON.parse(after.rawBody.toString('utf8')).id).toBe('evt_after');
    } finally {
      await d.close();
    }
  });

  it('a second rotation 1.4 s later (a retried call) keeps the first secret signing for its whole 24 hours; Authorization uses the oldest secret still within its window', async () => {
    const r = await fixture.receiver(() => ({ status: 204 }));
    const start = new Date();
    const clock = manualClock(start.toISOString());
    const call = await openApi({ allowLoopback: true, now: clock.now });
    await call('PUT', '/v1/webhooks/endpoint', { url: r.url });
    const original = await appSecret(ws);
    const d = await openDeliverer(ws, testSettings(), clock.now);
    try {
      const first = await call('POST', '/v1/webhooks/secret/rotate');
      clock.advance(1_400);
      const second = await call('POST', '/v1/webhooks/secret/rotate');
      expect([first.status, second.status]).toEqual([200, 200]);
      const [secret1, secret2] = [first.body.appSecret as string, second.body.appSecret as string];
      expect((await call('GET', '/v1/webhooks/endpoint')).body.previousSecretValidUntil).toBe(
        new Date(start.getTime() + 1_400 + 24 * 3_600_000).toISOString(),
      );
      const deliver = async (id: string) => {
        writeEvents(ws, `${id}.ndjson`, [{ id }]);
        await d.deliverer.runOnce();
        return r.received.find((x) => x.headers['x-event-id'] === id) as Received;
      };
      const soon = await deliver('evt_soon');
      expect(String(soon.headers['webhook-signature']).split(' ')).toHaveLength(3);
      expect([original, secret1, secret2].map((s) => verifiesWith(soon, s))).toEqual([true, true, true]);
      expect(soon.headers['authorization']).toBe(authorizationFor(soon, original));
      clock.advance(24 * 3_600_000 - 1_400 - 1_000);
      const late = await deliver('evt_late');
      expect([original, secret1, secret2].map((s) => verifiesWith(late, s))).toEqual([true, true, true]);
      expect(late.headers['authorization']).toBe(authorizationFor(late, original));
      // the original secret's window has ended, the first rotation's secret has 0.4 s left
      clock.advance(2_000);
      const between = await deliver('evt_between');
      expect([original, secret1, secret2].map((s) => verifiesWith(between, s))).toEqual([false, true, true]);
      expect(between.headers['authorization']).toBe(authorizationFor(between, secret1));
      clock.advance(1_000);
      const after = await deliver('evt_after');
      expect([original, secret1, secret2].map((s) => verifiesWith(after, s))).toEqual([false, false, true]);
      expect(after.headers['authorization']).toBe(authorizationFor(after, secret2));
    } finally {
      await d.close();
    }
  });
});
