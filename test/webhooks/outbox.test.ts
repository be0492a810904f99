// The outbox: intake of the jobs' event files (idempotent, bad lines kept with their reason),
// replays of dead letters, retention, and the operator's view of it all.
import { beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { operate } from '../../src/webhooks/operations.js';
import { askOutbox } from '../../src/webhooks/ask-outbox.js';
import { Outbox } from '../../src/webhooks/outbox.js';
import { InputError } from '../../src/errors.js';
import type { Receiver } from '../helpers/receiver.js';
import type { Workspace } from '../helpers/workspace.js';
import { manualClock, openDeliverer, setWebhook, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const fixture = useWebhookWorkspace();
let ws: Workspace;
let receiver: Receiver;
beforeEach(async () => {
  ws = fixture.ws();
  receiver = await fixture.receiver();
});

describe('intake', () => {
  it('takes each file in once, removes it, and leaves known ids alone when a job writes the same file again', async () => {
    const lines = writeEvents(ws, 'v000000000007.ndjson', [{ id: 'evt_1' }, { id: 'evt_2' }]);
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.step({ intake: 'always' });
      expect(readdirSync(ws.paths.eventsDir)).toEqual([]);
      writeEvents(ws, 'v000000000007.ndjson', [{ id: 'evt_1' }, { id: 'evt_2' }, { id: 'evt_3' }]);
      await d.deliverer.step({ intake: 'always' });
      expect(d.deliverer.counters.intake).toEqual({ files: 2, events: 3, known: 2, rejected: 0, failedFiles: 0 });
      const rows = await d.outbox.rows('select seq, event_id, body, status from events order by seq');
      expect(rows.map((r) => [Number(r['seq']), r['event_id'], r['status']])).toEqual([
        [1, 'evt_1', 'pending'],
        [2, 'evt_2', 'pending'],
        [3, 'evt_3', 'pending'],
      ]);
      expect(rows[0]?.['body']).toBe(lines[0]);
    } finally {
      await d.close();
    }
  });

  it('keeps every line it cannot take in, with file, line and reason, and takes in the rest', async () => {
    const good = JSON.stringify({
      id: 'evt_ok',
      type: 'trip.created',
      createdAt: '2026-11-21T03:00:00Z',
      appId: ws.appId,
      data: {},
    });
    writeFileSync(join(ws.paths.dataDir, 'x'), '');
    writeEvents(ws, 'v1.ndjson', []);
    writeFileSync(
      join(ws.paths.eventsDir, 'v1.ndjson'),
      [
        good,
        '{"id": ',
        '[1,2]',
        JSON.stringify({ id: '', type: 'trip.created' }),
        JSON.stringify({ id: 'e', type: 'trip.deleted', appId: 'a', createdAt: '2026-11-21T03:00:00Z', data: {} }),
        JSON.stringify({ id: 'e', type: 'trip.created', createdAt: '2026-11-21T03:00:00Z', data: {} }),
        JSON.stringify({ id: 'e', type: 'trip.created', appId: 'a', createdAt: 'yesterday', data: {} }),
        JSON.stringify({ id: 'e', type: 'trip.created', appId: 'a', createdAt: '2026-11-21T03:00:00Z' }),
        '',
        good,
      ].join('\n'),
    );
    writeFileSync(join(ws.paths.eventsDir, '.v2.ndjson.123.tmp'), 'a job still writing');
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.step({ intake: 'always' });
      expect(await d.outbox.rows('select source_file, line_no, reason from intake_rejects order by line_no')).toEqual([
        { source_file: 'v1.ndjson', line_no: 2, reason: 'invalid_json' },
        { source_file: 'v1.ndjson', line_no: 3, reason: 'not_an_object' },
        { source_file: 'v1.ndjson', line_no: 4, reason: 'invalid_id' },
        { source_file: 'v1.ndjson', line_no: 5, reason: 'unknown_type' },
        { source_file: 'v1.ndjson', line_no: 6, reason: 'missing_app_id' },
        { source_file: 'v1.ndjson', line_no: 7, reason: 'invalid_created_at' },
        { source_file: 'v1.ndjson', line_no: 8, reason: 'missing_data' },
      ]);
      expect(await d.outbox.rows('select event_id from events')).toEqual([{ event_id: 'evt_ok' }]);
      expect(d.deliverer.counters.intake).toMatchObject({ events: 1, rejected: 7 });
      expect(readdirSync(ws.paths.eventsDir)).toEqual(['.v2.ndjson.123.tmp']);
    } finally {
      await d.close();
    }
  });
});

describe('intake at volume and with a broken file', () => {
  it('takes a night-sized file in slices, one seq and one queue item per event, and sets an unreadable file aside', async () => {
    writeEvents(
      ws,
      'v000000000001.ndjson',
      Array.from({ length: 25_000 }, (_, i) => ({ id: `evt_${i}` })),
    );
    mkdirSync(join(ws.paths.eventsDir, 'v000000000000.ndjson')); // cannot be read as a file
    const d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.step({ intake: 'always' });
      expect(d.deliverer.counters.intake).toEqual({ files: 1, events: 25_000, known: 0, rejected: 0, failedFiles: 1 });
      expect(
        await d.outbox.rows(
          'select count(*)::int as n, count(distinct seq)::int as seqs, min(seq)::int as lo, max(seq)::int as hi, count(distinct event_id)::int as ids from events',
        ),
      ).toEqual([{ n: 25_000, seqs: 25_000, lo: 1, hi: 25_000, ids: 25_000 }]);
      expect(await d.outbox.rows('select count(*)::int as n from queue')).toEqual([{ n: 25_000 }]);
      expect(await d.outbox.rows('select event_id from events where seq in (1, 25000) order by seq')).toEqual([
        { event_id: 'evt_0' },
        { event_id: 'evt_24999' },
      ]);
      const failed = readdirSync(join(ws.paths.eventsDir, '..', 'failed'));
      expect(failed.some((f) => f.endsWith('v000000000000.ndjson.reason.txt'))).toBe(true);
      expect(readdirSync(ws.paths.eventsDir)).toEqual([]);
    } finally {
      await d.close();
    }
  });
});

describe('the operator', () => {
  it("waits for a deliverer that is still writing a new outbox's first bytes, rather than fail", async () => {
    // as a deliverer starting on a new outbox leaves it for a moment: the file there, no database in it yet
    mkdirSync(dirname(ws.paths.outboxFile), { recursive: true });
    writeFileSync(ws.paths.outboxFile, '');
    // the outbox the deliverer goes on to write, made aside and moved into place in one rename (in
    // this process DuckDB's file lock would not keep the request out of a half-made one, as it does
    // between processes)
    const made = join(ws.dir, 'outbox-made.duckdb');
    await (await Outbox.open(made)).close();
    const asked = askOutbox(ws.dir, { op: 'list', appId: null, status: 'failed', limit: 10 }, new Date());
    await new Promise((r) => setTimeout(r, 300));
    renameSync(made, ws.paths.outboxFile);
    expect(await asked).toEqual({ events: [] });
  });

  it('lists, shows every attempt, counts, and replays a dead letter once without rescheduling it', async () => {
    receiver.setBehaviour(() => ({ status: 500 }));
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_dead' }, { id: 'evt_other' }]);
    const clock = manualClock('2026-11-21T04:00:00.000Z');
    const d = await openDeliverer(ws, testSettings({ scheduleMs: [60_000] }), clock.now);
    const now = () => clock.now();
    try {
      await d.deliverer.runOnce();
      clock.advance(60_000);
      await d.deliverer.runOnce();
      expect(await operate(d.outbox, { op: 'list', status: 'failed' }, now())).toMatchObject({
        events: [{ event_id: 'evt_other', status: 'failed', attempt_count: 2 }, { event_id: 'evt_dead' }],
      });
      const shown = (await operate(d.outbox, { op: 'show', eventId: 'evt_dead' }, now())) as {
        event: Record<string, unknown>;
        attempts: Record<string, unknown>[];
      };
      expect(shown.event).toMatchObject({
        event_id: 'evt_dead',
        status: 'failed',
        dead_at: '2026-11-21T04:01:00.000Z',
        body: { id: 'evt_dead', type: 'trip.created' },
      });
      expect(shown.attempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          kind: 'scheduled',
          started_at: '2026-11-21T04:00:00.000Z',
          status_code: 500,
          error: 'HTTP 500',
          url: receiver.url,
        }),
        expect.objectContaining({
          attempt: 2,
          kind: 'scheduled',
          started_at: '2026-11-21T04:01:00.000Z',
          status_code: 500,
        }),
      ]);
      expect(typeof shown.attempts[0]?.['duration_ms']).toBe('number');

      // a replay that fails again stays a dead letter and is not rescheduled
      expect(await operate(d.outbox, { op: 'replay', eventId: 'evt_dead' }, now())).toEqual({ queued: ['evt_dead'] });
      await d.deliverer.runOnce();
      clock.advance(24 * 3_600_000);
      await d.deliverer.runOnce();
      expect(
        receiver.received
          .filter((r) => r.headers['x-event-id'] === 'evt_dead')
          .map((r) => r.headers['x-delivery-attempt']),
      ).toEqual(['1', '2', '3']);
      expect(await d.outbox.rows("select status, attempt_count from events where event_id = 'evt_dead'")).toEqual([
        { status: 'failed', attempt_count: 3 },
      ]);

      // the receiver is fixed: every dead letter of the app since a time goes out once more
      receiver.setBehaviour(() => ({ status: 200 }));
      expect(await operate(d.outbox, { op: 'replay', appId: ws.appId, since: '2026-11-21' }, now())).toEqual({
        queued: expect.arrayContaining(['evt_dead', 'evt_other']),
      });
      expect(await operate(d.outbox, { op: 'counts' }, now())).toMatchObject({
        counts: [{ app_id: ws.appId, status: 'failed', events: 2, replays_queued: 2 }],
      });
      await d.deliverer.runOnce();
      expect(await d.outbox.rows('select event_id, status, dead_at from events order by seq')).toEqual([
        { event_id: 'evt_dead', status: 'delivered', dead_at: null },
        { event_id: 'evt_other', status: 'delivered', dead_at: null },
      ]);
      expect(await d.outbox.rows('select kind, count(*)::int as n from attempts group by kind order by kind')).toEqual([
        { kind: 'replay', n: 3 },
        { kind: 'scheduled', n: 4 },
      ]);

      await expect(operate(d.outbox, { op: 'show', eventId: 'evt_nope' }, now())).rejects.toBeInstanceOf(InputError);
      await expect(operate(d.outbox, { op: 'replay', appId: ws.appId }, now())).rejects.toThrow(/--app and --since/);
      await expect(operate(d.outbox, { op: 'list', status: 'lost' as never }, now())).rejects.toThrow(/--status/);
    } finally {
      await d.close();
    }
  });

  it('refuses to replay an event that is still queued, and forgets finished events after the retention', async () => {
    receiver.setBehaviour((r) => (r.headers['x-event-id'] === 'evt_keep' ? { status: 500 } : { status: 200 }));
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_done' }, { id: 'evt_keep' }]);
    const clock = manualClock('2026-11-21T04:00:00.000Z');
    const d = await openDeliverer(ws, testSettings({ retentionDays: 30, scheduleMs: [40 * 86_400_000] }), clock.now);
    try {
      await d.deliverer.runOnce();
      await expect(operate(d.outbox, { op: 'replay', eventId: 'evt_keep' }, clock.now())).rejects.toThrow(
        /is pending and queued/,
      );
      clock.advance(31 * 86_400_000);
      await d.deliverer.runOnce();
      expect(await d.outbox.rows('select event_id, status from events')).toEqual([
        { event_id: 'evt_keep', status: 'pending' },
      ]);
      expect(await d.outbox.rows('select distinct event_id from attempts')).toEqual([{ event_id: 'evt_keep' }]);
    } finally {
      await d.close();
    }
    expect(existsSync(ws.paths.outboxFile)).toBe(true);
  });
});
