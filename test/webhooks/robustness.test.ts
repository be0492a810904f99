// What a receiver, an operator or a broken event line must not be able to do to the deliverer:
// wedge recording, block intake, send to a URL that was changed, or keep it from stopping.
import { beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { Breaker } from '../../src/webhooks/breaker.js';
import type { Workspace } from '../helpers/workspace.js';
import { openDeliverer, setWebhook, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const fixture = useWebhookWorkspace();
const receiver = fixture.receiver;
let ws: Workspace;
beforeEach(() => {
  ws = fixture.ws();
});

describe('the breaker', () => {
  it('wakes the attempts waiting for a probe when another attempt is answered first', async () => {
    const b = new Breaker(2, 1_000);
    b.record('u', false, 0, false);
    b.record('u', false, 0, false); // opens
    expect(b.admit('u', 2_000)).toBe('probe');
    const waiting = b.admit('u', 2_000);
    expect(waiting).toBeInstanceOf(Promise);
    b.record('u', true, 2_100, false); // a replay (never held back) is answered: closed
    await expect(
      Promise.race([waiting, new Promise((r) => setTimeout(() => r('still waiting'), 200))]),
    ).resolves.toBeUndefined();
    expect(b.admit('u', 2_200)).toBe('send');
    b.record('u', false, 2_300, true); // the probe's late non-answer is one failure, below the threshold
    expect(b.admit('u', 2_400)).toBe('send');
  });
});

describe('the deliverer', () => {
  it('records an answer whose text was cut inside an emoji, and goes on delivering to others', async () => {
    const odd = await receiver(() => ({ status: 500, body: `${'a'.repeat(199)}😀 and more` }));
    const fine = await receiver();
    const other = (await new AppStore(ws.paths.appsFile).add({ name: 'other' })).appId;
    await setWebhook(ws, odd.url);
    await setWebhook(ws, fine.url, other);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_odd' }, { id: 'evt_fine', appId: other }]);
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
      expect(fine.received).toHaveLength(1);
      const [row] = await d.outbox.rows("select status_code, error from attempts where event_id = 'evt_odd'");
      expect(row?.['status_code']).toBe(500);
      expect(String(row?.['error'])).toMatch(/^HTTP 500: a{199}\uFFFD$/);
    } finally {
      await d.close();
    }
  });

  it('rejects event lines whose id or time the database or a header could not take, and delivers the rest', async () => {
    const r = await receiver();
    await setWebhook(ws, r.url);
    const base = { type: 'trip.created', createdAt: '2026-11-21T03:00:00Z', appId: ws.appId, data: {} };
    writeEvents(ws, 'v1.ndjson', []);
    writeFileSync(
      join(ws.paths.eventsDir, 'v1.ndjson'),
      [
        JSON.stringify({ ...base, id: 'evt_\ud800' }),
        JSON.stringify({ ...base, id: 'evt\n1' }),
        JSON.stringify({ ...base, id: 'evt 1' }),
        JSON.stringify({ ...base, id: 'evt_y', createdAt: '+010000-01-01T00:00:00Z' }),
        JSON.stringify({ ...base, id: 'evt_good' }),
      ].join('\n'),
    );
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.runOnce();
      expect(await d.outbox.rows('select line_no, reason from intake_rejects order by line_no')).toEqual([
        { line_no: 1, reason: 'invalid_id' },
        { line_no: 2, reason: 'invalid_id' },
        { line_no: 3, reason: 'invalid_id' },
        { line_no: 4, reason: 'invalid_created_at' },
      ]);
      expect(r.received.map((x) => x.headers['x-event-id'])).toEqual(['evt_good']);
    } finally {
      await d.close();
    }
  });

  it('sends attempts taken before the operator changed the URL to the new URL', async () => {
    // the first answer waits until the operator has changed the URL (an event, not a delay, so a
    // loaded machine cannot change the order)
    let urlChanged: () => void = () => undefined;
    const changedUrl = new Promise<void>((resolve) => (urlChanged = resolve));
    const before = await receiver((req) => (req.index === 0 ? { status: 200, until: changedUrl } : { status: 200 }));
    const after = await receiver();
    await setWebhook(ws, before.url);
    writeEvents(
      ws,
      'v1.ndjson',
      Array.from({ length: 20 }, (_, i) => ({ id: `evt_u${i}` })),
    );
    const d = await openDeliverer(ws, testSettings({ perEndpoint: 1, timeoutMs: 10_000 }));
    try {
      const changed = before
        .waitFor(1)
        .then(() => setWebhook(ws, after.url))
        .then(urlChanged);
      await d.deliverer.runOnce();
      await changed;
      await d.deliverer.runOnce();
      // the 19 attempts taken while the first was out went to the new URL
      expect(before.received.length).toBe(1);
      expect(after.received.length).toBe(19);
      expect(await d.outbox.rows("select count(*)::int as n from events where status = 'delivered'")).toEqual([
        { n: 20 },
      ]);
      expect(await d.outbox.rows('select count(*)::int as n from attempts')).toEqual([{ n: 20 }]);
    } finally {
      await d.close();
    }
  });

  it('stops when told: attempts in flight finish, the ones not yet sent stay queued and unrecorded', async () => {
    const r = await receiver(() => 'hang');
    await setWebhook(ws, r.url);
    writeEvents(
      ws,
      'v1.ndjson',
      Array.from({ length: 10 }, (_, i) => ({ id: `evt_s${i}` })),
    );
    const d = await openDeliverer(ws, testSettings({ perEndpoint: 2, timeoutMs: 500 }));
    try {
      await d.deliverer.runOnce(r.waitFor(2).then(() => undefined));
      expect(r.received).toHaveLength(2);
      expect(await d.outbox.rows('select count(*)::int as attempts from attempts')).toEqual([{ attempts: 2 }]);
      expect(
        await d.outbox.rows(
          'select count(*)::int as queued, count(*) filter (where e.attempt_count = 0)::int as untried from queue join events as e using (seq)',
        ),
      ).toEqual([{ queued: 10, untried: 8 }]);
    } finally {
      await d.close();
    }
  });
});
