// The retry schedule with an injected clock: attempts at exactly the scheduled offsets after each
// failure, the sixth retry the last, then a dead letter; a real receiver on a loopback port.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { manualClock, openDeliverer, setWebhook, testSettings, writeEvents } from './setup.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const OFFSETS = [1 * MIN, 5 * MIN, 20 * MIN, 60 * MIN, 6 * HOUR, 24 * HOUR];

let ws: Workspace;
let receiver: Receiver;
beforeEach(async () => {
  ws = await workspace('UTC');
});
afterEach(async () => {
  await receiver?.close();
  ws.cleanup();
});

describe('the retry schedule', () => {
  it('retries 1 min, 5 min, 20 min, 60 min, 6 h and 24 h after each failure, then dead-letters', async () => {
    const clock = manualClock('2026-11-21T04:00:00.000Z');
    // each answer takes 1.5 s on the injected clock, so "after the failure" and "after the start" differ
    const ANSWER_MS = 1_500;
    receiver = await startReceiver(() => {
      clock.advance(ANSWER_MS);
      return { status: 500, body: 'receiver broke' };
    });
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v000000000001.ndjson', [{ id: 'evt_sched' }]);
    const d = await openDeliverer(ws, testSettings(), clock.now);
    try {
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(1);
      let failedAt = clock.now().getTime();
      for (const [retry, offset] of OFFSETS.entries()) {
        clock.set(failedAt + offset - 1); // one millisecond early: nothing goes out
        await d.deliverer.runOnce();
        expect(receiver.received).toHaveLength(retry + 1);
        clock.set(failedAt + offset);
        await d.deliverer.runOnce();
        expect(receiver.received).toHaveLength(retry + 2);
        failedAt = clock.now().getTime();
      }
      clock.advance(30 * 24 * HOUR);
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(7);

      expect(receiver.received.map((r) => r.headers['x-delivery-attempt'])).toEqual([
        '1',
        '2',
        '3',
        '4',
        '5',
        '6',
        '7',
      ]);
      expect(new Set(receiver.received.map((r) => r.headers['x-event-id']))).toEqual(new Set(['evt_sched']));
      const attempts = await d.outbox.rows(
        'select epoch_ms(started_at) as t, status_code, error from attempts order by attempt',
      );
      const times = attempts.map((a) => Number(a['t']));
      // from the start of one attempt to the next: its answer time, then the step
      expect(times.slice(1).map((t, i) => t - (times[i] as number))).toEqual(OFFSETS.map((o) => o + ANSWER_MS));
      expect(
        attempts.every((a) => a['status_code'] === 500 && String(a['error']).startsWith('HTTP 500: receiver broke')),
      ).toBe(true);
      const [event] = await d.outbox.rows('select status, attempt_count, dead_at is not null as dead from events');
      expect(event).toEqual({ status: 'failed', attempt_count: 7, dead: true });
      expect(await d.outbox.rows('select * from queue')).toEqual([]);
    } finally {
      await d.close();
    }
  });

  it('stops retrying at the first 2xx: two failures, then delivered at +1 min and +5 min', async () => {
    receiver = await startReceiver((r) => (r.index < 2 ? { status: 503 } : { status: 200 }));
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_twice' }]);
    const clock = manualClock('2026-11-21T04:00:00.000Z');
    const d = await openDeliverer(ws, testSettings(), clock.now);
    try {
      await d.deliverer.runOnce();
      clock.advance(MIN);
      await d.deliverer.runOnce();
      clock.advance(5 * MIN);
      await d.deliverer.runOnce();
      clock.advance(24 * HOUR);
      await d.deliverer.runOnce();
      expect(receiver.received.map((r) => r.headers['x-delivery-attempt'])).toEqual(['1', '2', '3']);
      expect(
        await d.outbox.rows('select status, attempt_count, epoch_ms(delivered_at)::double as at from events'),
      ).toEqual([{ status: 'delivered', attempt_count: 3, at: new Date('2026-11-21T04:06:00.000Z').getTime() }]);
    } finally {
      await d.close();
    }
  });

  it('honours a 429 Retry-After longer than the step, never a shorter one', async () => {
    receiver = await startReceiver((r) =>
      r.index === 0
        ? { status: 429, headers: { 'Retry-After': '600' } }
        : r.index === 1
          ? { status: 429, headers: { 'Retry-After': '1' } }
          : { status: 204 },
    );
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_429' }]);
    const clock = manualClock('2026-11-21T04:00:00.000Z');
    const d = await openDeliverer(ws, testSettings(), clock.now);
    try {
      await d.deliverer.runOnce();
      clock.advance(MIN); // the schedule's step, but the receiver asked for 10 minutes
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(1);
      clock.advance(9 * MIN);
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(2);
      clock.advance(MIN); // asked for 1 s: the schedule's 5 minutes still apply
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(2);
      clock.advance(4 * MIN);
      await d.deliverer.runOnce();
      expect(receiver.received).toHaveLength(3);
    } finally {
      await d.close();
    }
  });
});
