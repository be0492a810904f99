import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { InputError } from '../errors.js';
import type { Row } from '../db/sql.js';
import type { EventStatus, OutboxStore } from './outbox-store.js';

/** What the operator CLI asks of the outbox, directly or through the running deliverer. */
export type OperatorRequest =
  | { op: 'list'; appId?: string | null; status?: EventStatus | null; limit?: number; beforeSeq?: number | null }
  | { op: 'show'; eventId: string }
  | { op: 'counts' }
  | { op: 'replay'; eventId?: string | null; appId?: string | null; since?: string | null }
  /** Every delivered or dead event of one app created since then, sent once more (the webhook API's recover). */
  | { op: 'recover'; appId: string; since: string }
  /** How many of the app's events (of these types; none: every type) wait to be sent (the webhook API's set endpoint). */
  | { op: 'backlog'; appId: string; eventTypes: string[] }
  /** The outbox written into a new DuckDB file (jobs/backup.js): an absolute path that does not exist yet. */
  | { op: 'copy'; to: string };

export const STATUSES: EventStatus[] = ['pending', 'failed', 'delivered', 'filtered'];

/**
 * Answers one operator request on an outbox. `live` is the running deliverer's in-memory state
 * (open breakers, attempts in flight), when there is one.
 */
export async function operate(
  outbox: OutboxStore,
  request: OperatorRequest,
  now: Date,
  live?: unknown,
): Promise<unknown> {
  switch (request.op) {
    case 'list': {
      if (request.status && !STATUSES.includes(request.status))
        throw new InputError(`--status must be one of ${STATUSES.join(', ')}`);
      const limit = request.limit ?? 50;
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new InputError('--limit must be 1 to 10000');
      const rows = await outbox.list({
        appId: request.appId ?? null,
        status: request.status ?? null,
        limit,
        beforeSeq: request.beforeSeq ?? null,
      });
      return { events: rows.map(withIsoTimes) };
    }
    case 'show': {
      const found = await outbox.show(request.eventId);
      if (!found) throw new InputError(`no event '${request.eventId}' in the outbox`);
      const { seq: _seq, body, ...event } = withIsoTimes(found.event);
      return { event: { ...event, body: JSON.parse(String(body)) }, attempts: found.attempts.map(withIsoTimes) };
    }
    case 'counts':
      return { counts: (await outbox.counts(now)).map(withIsoTimes), deliverer: live ?? null };
    case 'replay':
      return replay(outbox, request, now);
    case 'backlog':
      return { backlog: await outbox.backlog(request.appId, request.eventTypes) };
    case 'copy': {
      if (!isAbsolute(request.to) || existsSync(request.to))
        throw new InputError('copy needs an absolute path where nothing is yet');
      await outbox.copyTo(request.to);
      return { copied: request.to, by: live === undefined ? 'read-only' : 'by the deliverer' };
    }
    case 'recover': {
      const since = new Date(request.since);
      if (!request.appId || Number.isNaN(since.getTime())) throw new InputError('recover needs an app and an ISO time');
      return {
        queued: await outbox.replay(
          { appId: request.appId, since, statuses: ['failed', 'delivered', 'filtered'] },
          now,
        ),
      };
    }
  }
}

async function replay(
  outbox: OutboxStore,
  request: Extract<OperatorRequest, { op: 'replay' }>,
  now: Date,
): Promise<unknown> {
  if (request.eventId) {
    // one event: a dead letter, or a delivered one the receiver asks for again
    // with an app, only that app's event (the webhook API): another app's id is "no event"
    const queued = await outbox.replay(
      { eventId: request.eventId, appId: request.appId ?? null, statuses: ['failed', 'delivered', 'filtered'] },
      now,
    );
    if (queued.length === 0) {
      const found = await outbox.show(request.eventId);
      if (!found || (request.appId && found.event['app_id'] !== request.appId))
        throw new InputError(`no event '${request.eventId}' in the outbox`);
      throw new InputError(
        `event '${request.eventId}' is ${found.event['status']} and queued: its next attempt comes anyway`,
      );
    }
    return { queued };
  }
  if (!request.appId || !request.since) throw new InputError('replay needs an event id, or --app and --since');
  const since = new Date(request.since);
  if (Number.isNaN(since.getTime()) || !/\d{4}-\d{2}-\d{2}/.test(request.since))
    throw new InputError(`--since must be a date or an ISO time, got '${request.since}'`);
  return { queued: await outbox.replay({ appId: request.appId, since, statuses: ['failed'] }, now) };
}

/** `x_ms` columns (epoch milliseconds) become ISO strings named `x_at`. */
function withIsoTimes(row: Row): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.endsWith('_ms') && key !== 'duration_ms')
      out[`${key.slice(0, -3)}_at`] = value === null ? null : new Date(Number(value)).toISOString();
    else out[key] = value;
  }
  return out;
}
