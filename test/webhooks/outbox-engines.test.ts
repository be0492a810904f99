// The outbox's contract, run on both engines: the DuckDB file (one machine) and PostgreSQL (with
// DATABASE_URL, shared by every machine) take events in, hand out due attempts, record outcomes,
// replay, count, drop a deleted user's events and prune alike, row for row.
import { describe, expect, it } from 'vitest';
import { operate } from '../../src/webhooks/operations.js';
import type { FinishedAttempt, IncomingEvent, OutboxStore } from '../../src/webhooks/outbox-store.js';
import { OUTBOXES, outboxes } from './outboxes.js';

const T0 = new Date('2026-11-21T03:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

function event(
  id: string,
  lineNo: number,
  extra: { appId?: string; type?: string; userId?: number } = {},
): IncomingEvent {
  const appId = extra.appId ?? 'app_a';
  const type = extra.type ?? 'trip.created';
  const body = JSON.stringify({ id, type, createdAt: T0.toISOString(), appId, data: { userId: extra.userId ?? 7 } });
  return { lineNo, eventId: id, appId, eventType: type, body, createdAt: T0.toISOString() };
}

function finished(
  seq: number,
  eventId: string,
  outcome: FinishedAttempt['outcome'],
  extra: Partial<FinishedAttempt> = {},
): FinishedAttempt {
  return {
    seq,
    eventId,
    attempt: 1,
    sent: true,
    kind: 'scheduled',
    startedAt: at(1_000),
    finishedAt: at(1_050),
    durationMs: 50,
    statusCode: outcome === 'delivered' ? 200 : 503,
    error: outcome === 'delivered' ? null : 'HTTP 503',
    url: 'https://receiver.example/hook',
    outcome,
    nextAt: outcome === 'retry' ? at(61_000) : null,
    ...extra,
  };
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r['event_id']);

describe.each(OUTBOXES)('the %s outbox', (kind) => {
  const store = outboxes(kind);
  let outbox: OutboxStore;

  it('takes events in once, in line order, each with one queue item, and keeps rejected lines', async () => {
    outbox = await store.fresh();
    expect(outbox.engine).toBe(kind);
    const rejects = [{ lineNo: 3, reason: 'invalid_json', raw: '{"id": ' }];
    expect(await outbox.intake('v1.ndjson', [event('e1', 1), event('e2', 2)], rejects, T0)).toBe(2);
    // written again after a crash, with one more event: only the new one is taken
    expect(await outbox.intake('v1.ndjson', [event('e1', 1), event('e2', 2), event('e3', 4)], [], T0)).toBe(1);
    const listed = (await operate(outbox, { op: 'list', limit: 10 }, T0)) as { events: Record<string, unknown>[] };
    expect(ids(listed.events)).toEqual(['e3', 'e2', 'e1']);
    expect(listed.events.map((e) => Number(e['seq']))).toEqual(
      [...listed.events.map((e) => Number(e['seq']))].sort((a, b) => b - a),
    );
    expect(listed.events[2]).toMatchObject({
      event_id: 'e1',
      app_id: 'app_a',
      event_type: 'trip.created',
      status: 'pending',
      attempt_count: 0,
      sent_attempts: 0,
      created_at: T0.toISOString(),
      next_attempt_at: T0.toISOString(),
      queued_kind: 'scheduled',
      last_attempt_at: null,
      delivered_at: null,
      dead_at: null,
    });
    expect(await outbox.backlog('app_a', [])).toBe(3);
    expect(await outbox.backlog('app_a', ['user.deleted'])).toBe(0);
  });

  it('hands out due attempts per app and records delivered, retried and dead ones with their queue items', async () => {
    outbox = await store.fresh();
    await outbox.intake(
      'v1.ndjson',
      [event('a1', 1), event('a2', 2), event('a3', 3), event('b1', 4, { appId: 'app_b' })],
      [],
      T0,
    );
    expect(await outbox.due([], 10, T0)).toEqual([]);
    const due = await outbox.due(['app_a'], 2, T0);
    expect(due.map((d) => [d.eventId, d.kind, d.attemptCount, d.sentAttempts])).toEqual([
      ['a1', 'scheduled', 0, 0],
      ['a2', 'scheduled', 0, 0],
    ]);
    const seqOf = new Map(due.map((d) => [d.eventId, d.seq]));
    await outbox.record([
      finished(seqOf.get('a1') as number, 'a1', 'delivered'),
      finished(seqOf.get('a2') as number, 'a2', 'retry'),
    ]);
    // a2 waits for its retry; a3 is due now
    expect((await outbox.due(['app_a', 'app_b'], 10, at(2_000))).map((d) => d.eventId)).toEqual(['a3', 'b1']);
    const retry = (await outbox.due(['app_a'], 10, at(61_000))).find((d) => d.eventId === 'a2');
    expect(retry).toMatchObject({ attemptCount: 1, sentAttempts: 1, scheduledAttempts: 1 });
    await outbox.record([
      finished(retry?.seq as number, 'a2', 'dead', { attempt: 2, startedAt: at(61_000), finishedAt: at(61_100) }),
    ]);
    const shown = (await operate(outbox, { op: 'show', eventId: 'a2' }, T0)) as {
      event: Record<string, unknown>;
      attempts: Record<string, unknown>[];
    };
    expect(shown.event).toMatchObject({
      status: 'failed',
      attempt_count: 2,
      dead_at: at(61_100).toISOString(),
      next_attempt_at: null,
    });
    expect(shown.attempts.map((a) => [a['attempt'], a['status_code'], a['started_at']])).toEqual([
      [1, 503, at(1_000).toISOString()],
      [2, 503, at(61_000).toISOString()],
    ]);
    const counts = (await operate(outbox, { op: 'counts' }, at(2_000))) as { counts: Record<string, unknown>[] };
    expect(counts.counts.map((c) => [c['app_id'], c['status'], c['events'], c['due_now']])).toEqual([
      ['app_a', 'delivered', 1, 0],
      ['app_a', 'failed', 1, 0],
      ['app_a', 'pending', 1, 1],
      ['app_b', 'pending', 1, 1],
    ]);
    expect(counts.counts[2]?.['oldest_pending_at']).toBe(T0.toISOString());
  });

  it('replays a dead or delivered event once, leaves a queued one alone, and pages the list', async () => {
    outbox = await store.fresh();
    await outbox.intake('v1.ndjson', [event('r1', 1), event('r2', 2), event('r3', 3)], [], T0);
    const due = await outbox.due(['app_a'], 10, T0);
    await outbox.record([
      finished(due[0]?.seq as number, 'r1', 'dead'),
      finished(due[1]?.seq as number, 'r2', 'delivered'),
    ]);
    expect(await operate(outbox, { op: 'replay', eventId: 'r1', appId: 'app_a' }, at(5_000))).toEqual({
      queued: ['r1'],
    });
    await expect(operate(outbox, { op: 'replay', eventId: 'r1', appId: 'app_a' }, at(5_000))).rejects.toThrow(/queued/);
    await expect(operate(outbox, { op: 'replay', eventId: 'r1', appId: 'app_b' }, at(5_000))).rejects.toThrow(
      /no event/,
    );
    const recovered = (await operate(
      outbox,
      { op: 'recover', appId: 'app_a', since: T0.toISOString() },
      at(5_000),
    )) as {
      queued: string[];
    };
    expect(recovered.queued).toEqual(['r2']);
    expect((await outbox.due(['app_a'], 10, at(5_000))).map((d) => [d.eventId, d.kind])).toEqual([
      ['r3', 'scheduled'],
      ['r1', 'replay'],
      ['r2', 'replay'],
    ]);
    const first = (await operate(outbox, { op: 'list', appId: 'app_a', limit: 2 }, T0)) as {
      events: Record<string, unknown>[];
    };
    expect(ids(first.events)).toEqual(['r3', 'r2']);
    const next = (await operate(
      outbox,
      { op: 'list', appId: 'app_a', limit: 2, beforeSeq: Number(first.events[1]?.['seq']) },
      T0,
    )) as {
      events: Record<string, unknown>[];
    };
    expect(ids(next.events)).toEqual(['r1']);
    const failed = (await operate(outbox, { op: 'list', status: 'failed', limit: 10 }, T0)) as {
      events: Record<string, unknown>[];
    };
    expect(ids(failed.events)).toEqual(['r1']);
  });

  it("drops a deleted user's other events with the intake that announces it, and prunes what is finished", async () => {
    outbox = await store.fresh();
    await outbox.intake(
      'v1.ndjson',
      [event('u7', 1), event('u8', 2, { userId: 8 }), event('other_app_u7', 3, { appId: 'app_b' })],
      [],
      T0,
    );
    const due = await outbox.due(['app_a'], 10, T0);
    await outbox.record([finished(due[0]?.seq as number, 'u7', 'delivered')]);
    await outbox.intake('v2.ndjson', [event('gone7', 1, { type: 'user.deleted' })], [], T0);
    expect(outbox.droppedForDeletedUsers).toBe(1);
    const all = (await operate(outbox, { op: 'list', limit: 10 }, T0)) as { events: Record<string, unknown>[] };
    expect(ids(all.events)).toEqual(['gone7', 'other_app_u7', 'u8']);
    await outbox.record([finished(due[1]?.seq as number, 'u8', 'delivered', { finishedAt: at(1_000) })]);
    // u8 delivered before the cutoff; app_b has no endpoint, so its old pending event goes too
    expect(await outbox.prune(at(10_000), ['app_a'])).toBe(2);
    const left = (await operate(outbox, { op: 'list', limit: 10 }, T0)) as { events: Record<string, unknown>[] };
    expect(ids(left.events)).toEqual(['gone7']);
  });
});
