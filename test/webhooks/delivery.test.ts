// Delivery to a real receiver on a loopback port: signatures checked by independent code, the
// receiver failing, hanging, redirecting or answering slowly, isolation between endpoints.
import { beforeEach, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AppStore } from '../../src/apps/store.js';
import { standardWebhooksSecret, verifyWebhook } from '../../src/webhooks/signature.js';
import type { Workspace } from '../helpers/workspace.js';
import { startReceiver } from '../helpers/receiver.js';
import {
  appSecret,
  manualClock,
  openDeliverer,
  setWebhook,
  testSettings,
  useWebhookWorkspace,
  writeEvents,
} from './setup.js';

const fixture = useWebhookWorkspace();
const receiver = fixture.receiver;
let ws: Workspace;
beforeEach(() => {
  ws = fixture.ws();
});

const hmacHex = (body: Buffer, secret: string) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');

describe('a delivery', () => {
  it('is a signed POST of the event file line, byte for byte, with the interface headers and Standard Webhooks ones', async () => {
    const r = await receiver();
    await setWebhook(ws, r.url);
    const lines = writeEvents(ws, 'v1.ndjson', [
      { id: 'evt_a', data: { tripId: 't-ümlaut', userId: 9 } },
      { id: 'evt_b', type: 'safety_score.updated' },
    ]);
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
    } finally {
      await d.close();
    }
    expect(r.received).toHaveLength(2);
    const secret = await appSecret(ws);
    for (const got of r.received) {
      const h = got.headers;
      const line = lines.find((l) => l.includes(`"id":"${h['x-event-id']}"`)) as string;
      expect(got.rawBody.toString('utf8')).toBe(line);
      expect(h['content-type']).toBe('application/json');
      expect(Number(h['content-length'])).toBe(Buffer.byteLength(line, 'utf8'));
      // an independent computation of the interface's signature
      expect(h['authorization']).toBe(`HMAC-SHA256 ${hmacHex(got.rawBody, secret)}`);
      expect(verifyWebhook(got.rawBody, h['authorization'], secret)).toBe(true);
      expect(h['x-event-type']).toBe(JSON.parse(line).type);
      expect(h['x-delivery-attempt']).toBe('1');
      // the Standard Webhooks package checks webhook-id, webhook-timestamp and webhook-signature
      const verified = new Webhook(standardWebhooksSecret(secret)).verify(got.rawBody.toString('utf8'), {
        'webhook-id': String(h['webhook-id']),
        'webhook-timestamp': String(h['webhook-timestamp']),
        'webhook-signature': String(h['webhook-signature']),
      });
      expect(verified).toEqual(JSON.parse(line));
      expect(h['webhook-id']).toBe(h['x-event-id']);
    }
  });

  it('during a secret rotation keeps Authorization on the previous secret and signs webhook-signature with both; after the grace period only the new one', async () => {
    const r = await receiver((req) => (req.index === 0 ? { status: 500 } : { status: 200 }));
    await setWebhook(ws, r.url);
    const oldSecret = await appSecret(ws);
    const rotated = await new AppStore(ws.paths.appsFile).rotateSecret(ws.appId, 3_600_000, new Date());
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_rot' }]);
    const clock = manualClock(new Date().toISOString());
    const d = await openDeliverer(ws, testSettings({ scheduleMs: [2 * 3_600_000] }), clock.now);
    try {
      await d.deliverer.runOnce();
      clock.advance(2 * 3_600_000); // past the grace period
      await d.deliverer.runOnce();
    } finally {
      await d.close();
    }
    const [during, after] = r.received as [(typeof r.received)[0], (typeof r.received)[0]];
    expect(verifyWebhook(during.rawBody, during.headers['authorization'], oldSecret)).toBe(true);
    expect(verifyWebhook(during.rawBody, during.headers['authorization'], [rotated.appSecret, oldSecret])).toBe(true);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, rotated.appSecret]) {
      expect(() =>
        new Webhook(standardWebhooksSecret(secret)).verify(during.rawBody.toString('utf8'), {
          'webhook-id': String(during.headers['webhook-id']),
          'webhook-timestamp': String(during.headers['webhook-timestamp']),
          'webhook-signature': String(during.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    expect(after.headers['authorization']).toBe(`HMAC-SHA256 ${hmacHex(after.rawBody, rotated.appSecret)}`);
    expect(verifyWebhook(after.rawBody, after.headers['authorization'], oldSecret)).toBe(false);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('fails an attempt when the receiver hangs past the timeout, redirects (not followed), or the connection is refused; a slow answer within the timeout is a success', async () => {
    const hang = await receiver(() => 'hang');
    const target = await receiver();
    const redirect = await receiver(() => ({ status: 302, headers: { Location: target.url } }));
    const slow = await receiver(() => ({ status: 200, delayMs: 300 }));
    const store = new AppStore(ws.paths.appsFile);
    const apps = {
      hang: ws.appId,
      redirect: (await store.add({ name: 'r' })).appId,
      slow: (await store.add({ name: 's' })).appId,
      refused: (await store.add({ name: 'x' })).appId,
    };
    await setWebhook(ws, hang.url, apps.hang);
    await setWebhook(ws, redirect.url, apps.redirect);
    await setWebhook(ws, slow.url, apps.slow);
    await setWebhook(ws, `http://127.0.0.1:${await closedPort()}/x`, apps.refused);
    writeEvents(
      ws,
      'v1.ndjson',
      Object.entries(apps).map(([name, appId]) => ({ id: `evt_${name}`, appId })),
    );
    // the slow answer (300 ms) has 1.7 s to spare before the timeout, for a loaded machine's delays
    const d = await openDeliverer(ws, testSettings({ timeoutMs: 2_000 }));
    try {
      await d.deliverer.runOnce();
      const rows = await d.outbox.rows(
        'select events.event_id, status, status_code, error, duration_ms from events join attempts using (seq) order by 1',
      );
      const by = Object.fromEntries(rows.map((x) => [x['event_id'], x]));
      expect(by['evt_hang']).toMatchObject({
        status: 'pending',
        status_code: null,
        error: 'timeout: no complete answer within 2000 ms',
      });
      expect(Number(by['evt_hang']!['duration_ms'])).toBeGreaterThanOrEqual(2_000);
      expect(by['evt_redirect']).toMatchObject({
        status: 'pending',
        status_code: 302,
        error: `HTTP 302: redirect to ${target.url} not followed`,
      });
      expect(target.received).toHaveLength(0);
      expect(by['evt_refused']).toMatchObject({ status: 'pending', status_code: null });
      expect(String(by['evt_refused']!['error'])).toMatch(/^ECONNREFUSED/);
      expect(by['evt_slow']).toMatchObject({ status: 'delivered', status_code: 200, error: null });
      expect(Number(by['evt_slow']!['duration_ms'])).toBeGreaterThanOrEqual(290);
    } finally {
      await d.close();
    }
  });

  it('keeps the events of an app without a webhook URL until one is set', async () => {
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_wait1' }, { id: 'evt_wait2' }]);
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
      expect(await d.outbox.rows('select event_id, status, attempt_count from events order by seq')).toEqual([
        { event_id: 'evt_wait1', status: 'pending', attempt_count: 0 },
        { event_id: 'evt_wait2', status: 'pending', attempt_count: 0 },
      ]);
      const r = await receiver();
      await setWebhook(ws, r.url);
      await d.deliverer.runOnce();
      expect(r.received.map((x) => x.headers['x-event-id']).sort()).toEqual(['evt_wait1', 'evt_wait2']);
      expect(await d.outbox.rows("select count(*)::int as n from events where status = 'delivered'")).toEqual([
        { n: 2 },
      ]);
    } finally {
      await d.close();
    }
  });

  it('bounds attempts per endpoint, so a hanging receiver does not hold up another app', async () => {
    const stuck = await receiver(() => 'hang');
    const fast = await receiver();
    const other = (await new AppStore(ws.paths.appsFile).add({ name: 'fast' })).appId;
    await setWebhook(ws, stuck.url);
    await setWebhook(ws, fast.url, other);
    writeEvents(ws, 'v1.ndjson', [
      ...Array.from({ length: 40 }, (_, i) => ({ id: `evt_stuck_${i}` })),
      ...Array.from({ length: 200 }, (_, i) => ({ id: `evt_fast_${i}`, appId: other })),
    ]);
    const d = await openDeliverer(ws, testSettings({ timeoutMs: 10_000, perEndpoint: 3, concurrency: 8 }));
    try {
      let whenFastDone: { stuckReceived: number; stuckFinished: number } | null = null;
      const stop = fast.waitFor(200, 20_000).then(async () => {
        whenFastDone = { stuckReceived: stuck.received.length, stuckFinished: d.deliverer.counters.retried };
        await stuck.close(); // ends the hanging attempts (reset) so the deliverer can stop
      });
      await d.deliverer.runUntil(stop);
      // all 200 went through while the stuck endpoint's first 3 attempts were still hanging
      expect(whenFastDone).toEqual({ stuckReceived: 3, stuckFinished: 0 });
      expect(fast.received).toHaveLength(200);
      expect(stuck.maxInFlight()).toBe(3);
    } finally {
      await d.close();
    }
  }, 30_000);

  it('opens the breaker after unanswered attempts: the rest fail at once on their schedule, a probe closes it again', async () => {
    const r = await receiver(() => 'hang');
    await setWebhook(ws, r.url);
    writeEvents(
      ws,
      'v1.ndjson',
      Array.from({ length: 20 }, (_, i) => ({ id: `evt_br_${String(i).padStart(2, '0')}` })),
    );
    const clock = manualClock(new Date().toISOString());
    const d = await openDeliverer(
      ws,
      testSettings({ timeoutMs: 300, perEndpoint: 2, breakerThreshold: 2, breakerCooldownMs: 30_000 }),
      clock.now,
    );
    try {
      await d.deliverer.runOnce();
      // two hang; a third may start before the second timeout is counted; then the breaker is open
      const real = r.received.length;
      expect(real).toBeGreaterThanOrEqual(2);
      expect(real).toBeLessThanOrEqual(3);
      const first = await d.outbox.rows(
        "select count(*) filter (where error like 'circuit_open%')::int as fast, count(*)::int as all from attempts",
      );
      expect(first).toEqual([{ fast: 20 - real, all: 20 }]);
      expect(
        await d.outbox.rows('select count(*)::int as n from queue where due_at = (select min(due_at) from queue)'),
      ).toEqual([{ n: 20 }]);
      // a minute later all are due again: one probe goes out for real and is answered
      r.setBehaviour(() => ({ status: 200 }));
      clock.advance(60_000);
      await d.deliverer.runOnce();
      expect(await d.outbox.rows("select count(*)::int as n from events where status = 'delivered'")).toEqual([
        { n: 20 },
      ]);
      expect(r.received).toHaveLength(real + 20);
      expect(await d.outbox.rows("select count(*)::int as n from attempts where error like 'circuit_open%'")).toEqual([
        { n: 20 - real },
      ]);
    } finally {
      await d.close();
    }
  });
});

async function closedPort(): Promise<number> {
  const r = await startReceiver();
  await r.close();
  return r.port;
}
