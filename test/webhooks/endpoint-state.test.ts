// What attempts do to an endpoint and to the count receivers see, against a real receiver on a
// loopback port with the clock in the test's hand: X-Delivery-Attempt counts attempts sent (no
// gaps from the breaker), a 410 disables at once, 5 days of failures disable, setting enables
// again, event types filter, and events of an app without an endpoint are dropped after 30 days.
import { beforeEach, describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import type { Workspace } from '../helpers/workspace.js';
import { manualClock, openDeliverer, setWebhook, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const fixture = useWebhookWorkspace();
let ws: Workspace;
beforeEach(() => {
  ws = fixture.ws();
});
const appOf = () => new AppStore(ws.paths.appsFile).get(ws.appId);
const MINUTE = 60_000;
const DAY = 86_400_000;

describe('X-Delivery-Attempt', () => {
  it('counts the attempts sent: those the open breaker failed without sending leave no gap', async () => {
    const r = await fixture.receiver(() => 'hang');
    await setWebhook(ws, r.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_gap' }]);
    const clock = manualClock(new Date().toISOString());
    const d = await openDeliverer(
      ws,
      testSettings({
        timeoutMs: 300,
        breakerThreshold: 1,
        breakerCooldownMs: 5 * MINUTE,
        scheduleMs: [MINUTE, MINUTE, MINUTE, MINUTE],
      }),
      clock.now,
    );
    try {
      await d.deliverer.runOnce(); // sent, unanswered: the breaker opens
      clock.advance(MINUTE);
      await d.deliverer.runOnce(); // skipped by the breaker (not sent)
      clock.advance(MINUTE);
      await d.deliverer.runOnce(); // skipped again
      r.setBehaviour(() => ({ status: 204 }));
      clock.advance(5 * MINUTE);
      await d.deliverer.runOnce(); // the probe: sent and answered
      expect(r.received.map((x) => x.headers['x-delivery-attempt'])).toEqual(['1', '2']);
      const attempts = await d.outbox.rows(
        "select count(*)::int as n, count(*) filter (where error like 'circuit_open%')::int as skipped from attempts",
      );
      expect(attempts).toEqual([{ n: 4, skipped: 2 }]);
      expect(await d.outbox.rows('select status, attempt_count, sent_attempts from events')).toEqual([
        { status: 'delivered', attempt_count: 4, sent_attempts: 2 },
      ]);
    } finally {
      await d.close();
    }
  });
});

describe('an endpoint', () => {
  it('answering 410 is disabled at once; its events wait; setting it again enables it and they are sent', async () => {
    const r = await fixture.receiver(() => ({ status: 410 }));
    await setWebhook(ws, r.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_gone_1' }, { id: 'evt_gone_2' }]);
    const clock = manualClock(new Date().toISOString());
    const d = await openDeliverer(
      ws,
      testSettings({ perEndpoint: 1, concurrency: 1, scheduleMs: [MINUTE, MINUTE] }),
      clock.now,
    );
    try {
      await d.deliverer.runOnce();
      expect((await appOf())?.webhookDisabled).toEqual({
        reason: 'the endpoint answered 410 Gone',
        at: expect.any(String),
      });
      const seen = r.received.length;
      expect(seen).toBeGreaterThanOrEqual(1);
      clock.advance(10 * MINUTE);
      await d.deliverer.runOnce();
      expect(r.received).toHaveLength(seen); // disabled: nothing more is sent
      expect(await d.outbox.rows("select count(*)::int as n from events where status = 'pending'")).toEqual([{ n: 2 }]);
      r.setBehaviour(() => ({ status: 200 }));
      await setWebhook(ws, r.url);
      expect((await appOf())?.webhookDisabled).toBeNull();
      await d.deliverer.runOnce();
      expect(await d.outbox.rows("select count(*)::int as n from events where status = 'delivered'")).toEqual([
        { n: 2 },
      ]);
    } finally {
      await d.close();
    }
  });

  it('that failed every attempt for 5 days is disabled, naming why; a success before that ends the streak', async () => {
    const r = await fixture.receiver(() => ({ status: 500 }));
    await setWebhook(ws, r.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_5d' }]);
    const start = new Date();
    const clock = manualClock(start.toISOString());
    const d = await openDeliverer(ws, testSettings({ scheduleMs: Array(8).fill(DAY) }), clock.now);
    try {
      await d.deliverer.runOnce();
      expect((await appOf())?.webhookFailingSince).toBe(start.toISOString());
      for (let day = 1; day <= 4; day++) {
        clock.advance(DAY);
        await d.deliverer.runOnce();
      }
      expect((await appOf())?.webhookDisabled ?? null).toBeNull(); // 4 days of failures: still enabled
      clock.advance(DAY);
      await d.deliverer.runOnce();
      expect(r.received).toHaveLength(6);
      expect((await appOf())?.webhookDisabled?.reason).toBe(
        `every attempt failed for 5 days (since ${start.toISOString()}); the last: HTTP 500`,
      );
    } finally {
      await d.close();
    }
    // the streak restarts after a success
    await setWebhook(ws, r.url);
    r.setBehaviour(() => ({ status: 204 }));
    writeEvents(ws, 'v2.ndjson', [{ id: 'evt_ok' }]);
    const d2 = await openDeliverer(ws, testSettings({ scheduleMs: Array(8).fill(DAY) }), clock.now);
    try {
      await d2.deliverer.runOnce();
      expect(await appOf()).toMatchObject({ webhookDisabled: null, webhookFailingSince: null });
    } finally {
      await d2.close();
    }
  });

  it('gets only the event types it lists; the others are finished as filtered, without an attempt', async () => {
    const r = await fixture.receiver(() => ({ status: 204 }));
    await new AppStore(ws.paths.appsFile).setWebhook(ws.appId, r.url, ['safety_score.updated']);
    writeEvents(ws, 'v1.ndjson', [
      { id: 'evt_trip', type: 'trip.created' },
      { id: 'evt_score', type: 'safety_score.updated' },
    ]);
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
      expect(r.received.map((x) => x.headers['x-event-id'])).toEqual(['evt_score']);
      expect(await d.outbox.rows('select event_id, status, attempt_count from events order by event_id')).toEqual([
        { event_id: 'evt_score', status: 'delivered', attempt_count: 1 },
        { event_id: 'evt_trip', status: 'filtered', attempt_count: 0 },
      ]);
      expect(await d.outbox.rows('select event_id from attempts')).toEqual([{ event_id: 'evt_score' }]);
    } finally {
      await d.close();
    }
  });
});

describe('events of an app without an endpoint', () => {
  it('are kept 30 days from their creation (sent if an endpoint is set meanwhile), then dropped', async () => {
    const other = (await new AppStore(ws.paths.appsFile).add({ name: 'with endpoint' })).appId;
    const r = await fixture.receiver(() => ({ status: 503 }));
    await setWebhook(ws, r.url, other);
    const created = new Date();
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_no_endpoint' }, { id: 'evt_other', appId: other }], created.toISOString());
    const clock = manualClock(created.toISOString());
    const d = await openDeliverer(ws, testSettings({ scheduleMs: Array(3).fill(40 * DAY) }), clock.now);
    try {
      await d.deliverer.runOnce();
      clock.advance(29 * DAY);
      await d.deliverer.runOnce();
      expect(await d.outbox.rows('select event_id from events order by event_id')).toEqual([
        { event_id: 'evt_no_endpoint' },
        { event_id: 'evt_other' },
      ]);
      clock.advance(1 * DAY + MINUTE);
      await d.deliverer.runOnce();
      // the app without an endpoint lost its event; the other's pending event stays, whatever its age
      expect(await d.outbox.rows('select event_id, status from events')).toEqual([
        { event_id: 'evt_other', status: 'pending' },
      ]);
      expect(await d.outbox.rows('select count(*)::int as n from queue')).toEqual([{ n: 1 }]);
    } finally {
      await d.close();
    }
  });
});
