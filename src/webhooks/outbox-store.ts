import type { Params, Row } from '../db/sql.js';

export interface IncomingEvent {
  lineNo: number;
  eventId: string;
  appId: string;
  eventType: string;
  body: string;
  createdAt: string;
}

export interface RejectedLine {
  lineNo: number;
  reason: string;
  raw: string;
}

export interface DueAttempt {
  seq: number;
  eventId: string;
  appId: string;
  kind: 'scheduled' | 'replay';
  eventType: string;
  body: string;
  attemptCount: number;
  /** Attempts actually sent so far (the breaker's skipped ones not counted). */
  sentAttempts: number;
  scheduledAttempts: number;
}

export interface FinishedAttempt {
  seq: number;
  eventId: string;
  attempt: number;
  /** False when the breaker failed the attempt without sending it. */
  sent: boolean;
  kind: 'scheduled' | 'replay';
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  url: string;
  outcome: 'delivered' | 'retry' | 'dead' | 'replay_failed' | 'filtered';
  nextAt: Date | null;
}

/** A row of either outbox's `due` statement as the deliverer takes it. */
export function dueAttempt(r: Record<string, unknown>): DueAttempt {
  return {
    seq: Number(r['seq']),
    eventId: String(r['event_id']),
    appId: String(r['app_id']),
    kind: r['kind'] as DueAttempt['kind'],
    eventType: String(r['event_type']),
    body: String(r['body']),
    attemptCount: Number(r['attempt_count']),
    sentAttempts: Number(r['sent_attempts']),
    scheduledAttempts: Number(r['scheduled_attempts']),
  };
}

/** Finished attempts as the `record` statements of both outboxes read them: one JSON text of rows. */
export function attemptRows(finished: FinishedAttempt[]): string {
  return JSON.stringify(
    finished.map((f) => ({
      seq: f.seq,
      event_id: f.eventId,
      attempt: f.attempt,
      sent: f.sent,
      kind: f.kind,
      started_at: f.startedAt.toISOString(),
      finished_at: f.finishedAt.toISOString(),
      duration_ms: f.durationMs,
      status_code: f.statusCode,
      error: f.error,
      url: f.url,
      outcome: f.outcome,
      next_at: f.nextAt?.toISOString() ?? null,
    })),
  );
}

export type EventStatus = 'pending' | 'failed' | 'delivered' | 'filtered';

/**
 * The webhook outbox: events, their queue of attempts to make, the attempts made, the rejected
 * lines of event files. Two engines keep it: a DuckDB file in the data folder (outbox.ts, one
 * machine) and PostgreSQL (outbox-pg.ts, with DATABASE_URL: every machine's deliverer and API
 * reach the same one). Both give the same rows, times as epoch milliseconds (`x_ms`).
 */
export interface OutboxStore {
  readonly engine: 'duckdb' | 'postgres';
  /** Users' events dropped by intakes (user.deleted) since the outbox was opened. */
  droppedForDeletedUsers: number;
  /** Takes one event file's lines in, in one transaction; known event ids are left alone. */
  intake(sourceFile: string, events: IncomingEvent[], rejects: RejectedLine[], now: Date): Promise<number>;
  /** Queued attempts that are due, at most `perApp` per app, for apps that have a webhook URL. */
  due(appIds: string[], perApp: number, now: Date): Promise<DueAttempt[]>;
  /** Records finished attempts with the event states and queue items they change, in one transaction. */
  record(finished: FinishedAttempt[]): Promise<void>;
  /** Events newest first; `beforeSeq` continues a page (rows carry their `seq`). */
  list(filter: {
    appId?: string | null;
    status?: EventStatus | null;
    limit: number;
    beforeSeq?: number | null;
  }): Promise<Row[]>;
  show(eventId: string): Promise<{ event: Row; attempts: Row[] } | null>;
  counts(now: Date): Promise<Row[]>;
  /** The app's events waiting to be sent, of the given types (none: every type). */
  backlog(appId: string, eventTypes: string[]): Promise<number>;
  /** Queues one replay attempt per matching event; returns the ids queued. */
  replay(
    selection: { eventId?: string | null; appId?: string | null; since?: Date | null; statuses: EventStatus[] },
    now: Date,
  ): Promise<string[]>;
  /**
   * Forgets delivered, dead and filtered events that finished before `before`, and pending events
   * created before it whose app is not in `endpointApps` (no enabled endpoint).
   */
  prune(before: Date, endpointApps: string[]): Promise<number>;
  /** Writes the outbox into a new DuckDB file `target` (a backup's copy); DuckDB's outbox only. */
  copyTo(target: string): Promise<void>;
  /** Rows of any query over the outbox in its engine's dialect (tests and benchmarks). */
  rows(sql: string, params?: Params): Promise<Row[]>;
  close(): Promise<void>;
}
