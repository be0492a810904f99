import { openDatabase, type Database } from '../db/open.js';
import { type Params, query, queryFile, queryScript, type Row, runFile, runScript } from '../db/sql.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { SerialQueue } from '../db/serial.js';
import { listValue } from '../db/duckdb.js';
import { compactDatabase } from '../db/compact.js';
import type {
  DueAttempt,
  EventStatus,
  FinishedAttempt,
  IncomingEvent,
  OutboxStore,
  RejectedLine,
} from './outbox-store.js';
import { attemptRows, dueAttempt } from './outbox-store.js';
import { attach, copyDatabase, currentDatabase, detach } from '../db/statements.js';

export type { DueAttempt, EventStatus, FinishedAttempt, IncomingEvent, OutboxStore, RejectedLine };

const INTAKE_SLICE = 10_000;

/**
 * The deliverer's outbox as a DuckDB file it alone writes (one machine; without DATABASE_URL). Every call goes through one queue: a
 * DuckDB connection runs one statement at a time, and a transaction must not interleave with the
 * operator's requests that arrive over the control socket.
 */
export class Outbox implements OutboxStore {
  readonly engine = 'duckdb' as const;
  private readonly queue = new SerialQueue();

  /** Users' events dropped by intakes (user.deleted) since the outbox was opened. */
  droppedForDeletedUsers = 0;

  private constructor(
    private db: Database,
    private readonly file: string,
    private readonly settings: Parameters<typeof openDatabase>[1],
  ) {}

  static async open(file: string, options: { readOnly?: boolean; lockWaitMs?: number } = {}): Promise<Outbox> {
    const settings = {
      readOnly: options.readOnly,
      lockWaitMs: options.lockWaitMs ?? 0,
      threads: 2,
      memoryLimit: '1GB',
    };
    const db = await openDatabase(file, settings);
    try {
      if (!options.readOnly) await runScript(db.connection, 'ops/webhooks/schema');
    } catch (error) {
      db.close();
      throw error;
    }
    return new Outbox(db, file, settings);
  }

  /** Takes one event file's lines in, in one transaction; known event ids are left alone. */
  intake(sourceFile: string, events: IncomingEvent[], rejects: RejectedLine[], now: Date): Promise<number> {
    return this.serial(async (conn) => {
      let dropped = 0;
      const taken = await inTransaction(conn, async () => {
        let n = 0;
        // in slices, so a night's file (hundreds of thousands of events) is never one huge parameter
        for (let i = 0; i < events.length; i += INTAKE_SLICE) {
          const slice = events.slice(i, i + INTAKE_SLICE);
          const rows = slice.map((e) => ({
            line_no: e.lineNo,
            event_id: e.eventId,
            app_id: e.appId,
            event_type: e.eventType,
            body: e.body,
            created_at: e.createdAt,
          }));
          const params = { rows: JSON.stringify(rows), now: now.toISOString(), source_file: sourceFile };
          n += Number((await queryScript(conn, 'ops/webhooks/intake', params))[0]?.['taken'] ?? 0);
          // a deleted user's other events leave the outbox with the intake that announces it (only
          // then is the events table read: most files announce no deletion)
          if (slice.some((e) => e.eventType === 'user.deleted'))
            dropped += Number((await queryScript(conn, 'ops/webhooks/drop_deleted_users'))[0]?.['dropped'] ?? 0);
        }
        if (rejects.length > 0) {
          await runFile(conn, 'ops/webhooks/reject', {
            rows: JSON.stringify(rejects.map((r) => ({ line_no: r.lineNo, reason: r.reason, raw: r.raw }))),
            source_file: sourceFile,
            now: now.toISOString(),
          });
        }
        return n;
      });
      if (dropped > 0) {
        this.droppedForDeletedUsers += dropped;
        await this.rewrite();
      }
      return taken;
    });
  }

  /**
   * Rewrites the outbox file without the bytes of deleted rows (src/db/compact.ts) and reopens it:
   * DuckDB keeps a deleted event's body in the file's blocks until the table is written anew.
   * Runs inside the serial queue, so nothing uses the old connection meanwhile.
   */
  private async rewrite(): Promise<void> {
    await compactDatabase(this.db.connection, await currentDatabase(this.db.connection), this.file);
    this.db.close();
    this.db = await openDatabase(this.file, this.settings);
  }

  /** Queued attempts that are due, at most `perApp` per app, for apps that have a webhook URL. */
  async due(appIds: string[], perApp: number, now: Date): Promise<DueAttempt[]> {
    if (appIds.length === 0) return [];
    const rows = await this.serial((conn) =>
      queryFile(conn, 'ops/webhooks/due', { now: now.toISOString(), apps: listValue(appIds), per_app: perApp }),
    );
    return rows.map(dueAttempt);
  }

  /** Records finished attempts with the event states and queue items they change, in one transaction. */
  record(finished: FinishedAttempt[]): Promise<void> {
    if (finished.length === 0) return Promise.resolve();
    return this.serial((conn) =>
      inTransaction(conn, () => runScript(conn, 'ops/webhooks/record', { rows: attemptRows(finished) })),
    );
  }

  /** Events newest first; `beforeSeq` continues a page (rows carry their `seq`). */
  list(filter: {
    appId?: string | null;
    status?: EventStatus | null;
    limit: number;
    beforeSeq?: number | null;
  }): Promise<Row[]> {
    return this.serial((conn) =>
      queryFile(conn, 'ops/webhooks/list', {
        app: filter.appId ?? null,
        status: filter.status ?? null,
        limit: filter.limit,
        before_seq: filter.beforeSeq ?? null,
      }),
    );
  }

  async show(eventId: string): Promise<{ event: Row; attempts: Row[] } | null> {
    return this.serial(async (conn) => {
      const event = (await queryFile(conn, 'ops/webhooks/show_event', { event_id: eventId }))[0];
      if (!event) return null;
      return { event, attempts: await queryFile(conn, 'ops/webhooks/show_attempts', { seq: Number(event['seq']) }) };
    });
  }

  counts(now: Date): Promise<Row[]> {
    return this.serial((conn) => queryFile(conn, 'ops/webhooks/counts', { now: now.toISOString() }));
  }

  /** The app's events waiting to be sent, of the given types (none: every type). */
  async backlog(appId: string, eventTypes: string[]): Promise<number> {
    const rows = await this.serial((conn) =>
      queryFile(conn, 'ops/webhooks/backlog', { app: appId, types: JSON.stringify(eventTypes) }),
    );
    return Number(rows[0]?.['backlog'] ?? 0);
  }

  /** Queues one replay attempt per matching event; returns the ids queued. */
  async replay(
    selection: { eventId?: string | null; appId?: string | null; since?: Date | null; statuses: EventStatus[] },
    now: Date,
  ): Promise<string[]> {
    const rows = await this.serial((conn) =>
      queryFile(conn, 'ops/webhooks/replay', {
        event_id: selection.eventId ?? null,
        app: selection.appId ?? null,
        since: selection.since?.toISOString() ?? null,
        statuses: listValue(selection.statuses),
        now: now.toISOString(),
      }),
    );
    return rows.map((r) => String(r['event_id']));
  }

  /**
   * Forgets delivered, dead and filtered events that finished before `before`, and pending events
   * created before it whose app is not in `endpointApps` (no enabled endpoint).
   */
  prune(before: Date, endpointApps: string[]): Promise<number> {
    return this.serial(async (conn) =>
      inTransaction(conn, async () =>
        Number(
          (
            await queryScript(conn, 'ops/webhooks/prune', {
              before: before.toISOString(),
              endpoint_apps: JSON.stringify(endpointApps),
            })
          )[0]?.['pruned'] ?? 0,
        ),
      ),
    );
  }

  /**
   * Writes the outbox as it is now into a new DuckDB file `target` (a backup's copy):
   * one COPY FROM DATABASE in the serial queue, so no intake or record lands halfway through it, and
   * without stopping the deliverer that holds the file (no other process may open it meanwhile).
   */
  copyTo(target: string): Promise<void> {
    return this.serial(async (conn) => {
      const source = await currentDatabase(conn);
      const alias = 'backup_target';
      // READ_WRITE: an outbox opened read-only (no deliverer running) still writes its copy
      await attach(conn, target, alias, 'READ_WRITE');
      try {
        await copyDatabase(conn, source, alias);
      } finally {
        await detach(conn, alias);
      }
    });
  }

  /** Rows of any query over the outbox (tests and benchmarks). */
  rows(sql: string, params?: Params): Promise<Row[]> {
    return this.serial((conn) => query(conn, sql, params));
  }

  close(): Promise<void> {
    return this.queue.run(async () => this.db.close());
  }

  private serial<T>(work: (conn: Database['connection']) => Promise<T>): Promise<T> {
    return this.queue.run(() => work(this.db.connection));
  }
}
