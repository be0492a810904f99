import pg from 'pg';
import { sqlText, type Params, type Row } from '../db/sql.js';
import { InputError } from '../errors.js';
import { namedParameters, pickParams, type StateParams } from '../state/db.js';
import { poolWithSchema } from '../state/pg-schema.js';
import { inPgTransaction } from '../state/pg-transaction.js';
import type {
  DueAttempt,
  EventStatus,
  FinishedAttempt,
  IncomingEvent,
  OutboxStore,
  RejectedLine,
} from './outbox-store.js';
import { attemptRows, dueAttempt } from './outbox-store.js';

/** Lock id (pg_advisory_xact_lock) that orders the outbox's schema creation between processes. */
const OUTBOX_SCHEMA_LOCK_ID = 72_657_002;
const INTAKE_SLICE = 10_000;

// bigint columns (seqs, epoch milliseconds, counts) are below 2^53: numbers, not strings
pg.types.setTypeParser(20, (value: string) => Number(value));

type Client = pg.Pool | pg.PoolClient;

/**
 * The webhook outbox in PostgreSQL (with DATABASE_URL): the tables of sql/ops/webhooks-pg/ in the
 * `webhooks` schema of the shared state store's database. Every machine reaches the same outbox:
 * each deliverer takes its machine's event files in (idempotent by event id), the one holding the
 * lease delivers, and every API machine's webhook routes read and queue replays here directly.
 */
export class PostgresOutbox implements OutboxStore {
  readonly engine = 'postgres' as const;
  droppedForDeletedUsers = 0;

  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<PostgresOutbox> {
    // idle connections do not keep a finished job alive
    const pool = await poolWithSchema(
      { connectionString: url, max: 4, idleTimeoutMillis: 5_000, allowExitOnIdle: true },
      OUTBOX_SCHEMA_LOCK_ID,
      sqlText('ops/webhooks-pg/schema'),
    );
    return new PostgresOutbox(pool);
  }

  intake(sourceFile: string, events: IncomingEvent[], rejects: RejectedLine[], now: Date): Promise<number> {
    return this.transaction(async (client) => {
      let taken = 0;
      let dropped = 0;
      for (let i = 0; i < events.length; i += INTAKE_SLICE) {
        const slice = events.slice(i, i + INTAKE_SLICE);
        const rows = JSON.stringify(
          slice.map((e) => ({
            line_no: e.lineNo,
            event_id: e.eventId,
            app_id: e.appId,
            event_type: e.eventType,
            body: e.body,
            created_at: e.createdAt,
          })),
        );
        const [row] = await exec(client, 'intake', { rows, now: now.toISOString(), source_file: sourceFile });
        taken += Number(row?.['taken'] ?? 0);
        if (slice.some((e) => e.eventType === 'user.deleted'))
          dropped += Number((await exec(client, 'drop_deleted_users', { rows }))[0]?.['dropped'] ?? 0);
      }
      if (rejects.length > 0) {
        await exec(client, 'reject', {
          // PostgreSQL text holds no NUL character: a line that carries one is shown without it
          rows: JSON.stringify(
            rejects.map((r) => ({ line_no: r.lineNo, reason: r.reason, raw: r.raw.replaceAll('\u0000', '\ufffd') })),
          ),
          source_file: sourceFile,
          now: now.toISOString(),
        });
      }
      return { taken, dropped };
    }).then(async ({ taken, dropped }) => {
      if (dropped > 0) {
        this.droppedForDeletedUsers += dropped;
        await this.reclaim();
      }
      return taken;
    });
  }

  /**
   * Vacuums the outbox's tables so the row versions of dropped events no longer hold their bytes
   * (the DuckDB outbox rewrites its file for the same reason). Outside a transaction, as VACUUM must be.
   */
  private async reclaim(): Promise<void> {
    await this.pool.query(sqlText('ops/webhooks-pg/vacuum'));
  }

  async due(appIds: string[], perApp: number, now: Date): Promise<DueAttempt[]> {
    if (appIds.length === 0) return [];
    const rows = await exec(this.pool, 'due', {
      now: now.toISOString(),
      apps: JSON.stringify(appIds),
      per_app: perApp,
    });
    return rows.map(dueAttempt);
  }

  async record(finished: FinishedAttempt[]): Promise<void> {
    if (finished.length === 0) return;
    // one statement: its changes to attempts, events and queue commit together
    await exec(this.pool, 'record', { rows: attemptRows(finished) });
  }

  list(filter: {
    appId?: string | null;
    status?: EventStatus | null;
    limit: number;
    beforeSeq?: number | null;
  }): Promise<Row[]> {
    return exec(this.pool, 'list', {
      app: filter.appId ?? null,
      status: filter.status ?? null,
      limit: filter.limit,
      before_seq: filter.beforeSeq ?? null,
    });
  }

  async show(eventId: string): Promise<{ event: Row; attempts: Row[] } | null> {
    const event = (await exec(this.pool, 'show_event', { event_id: eventId }))[0];
    if (!event) return null;
    return { event, attempts: await exec(this.pool, 'show_attempts', { seq: Number(event['seq']) }) };
  }

  counts(now: Date): Promise<Row[]> {
    return exec(this.pool, 'counts', { now: now.toISOString() });
  }

  async backlog(appId: string, eventTypes: string[]): Promise<number> {
    const rows = await exec(this.pool, 'backlog', { app: appId, types: JSON.stringify(eventTypes) });
    return Number(rows[0]?.['backlog'] ?? 0);
  }

  async replay(
    selection: { eventId?: string | null; appId?: string | null; since?: Date | null; statuses: EventStatus[] },
    now: Date,
  ): Promise<string[]> {
    const rows = await exec(this.pool, 'replay', {
      event_id: selection.eventId ?? null,
      app: selection.appId ?? null,
      since: selection.since?.toISOString() ?? null,
      statuses: JSON.stringify(selection.statuses),
      now: now.toISOString(),
    });
    return rows.map((r) => String(r['event_id']));
  }

  async prune(before: Date, endpointApps: string[]): Promise<number> {
    const rows = await exec(this.pool, 'prune', {
      before: before.toISOString(),
      endpoint_apps: JSON.stringify(endpointApps),
    });
    return Number(rows[0]?.['pruned'] ?? 0);
  }

  copyTo(_target: string): Promise<void> {
    return Promise.reject(
      new InputError('the outbox is in PostgreSQL (DATABASE_URL): pg_dump of that database backs it up'),
    );
  }

  /** Rows of any query, with the `webhooks` schema first on the search path (tests and benchmarks). */
  async rows(sql: string, params: Params = {}): Promise<Row[]> {
    const client = await this.pool.connect();
    try {
      await client.query(sqlText('ops/webhooks-pg/search_path'));
      const names = namedParameters(sql);
      const positional = sql.replace(/\$([a-z_][a-z0-9_]*)/gi, (_, n: string) => `$${names.indexOf(n) + 1}`);
      return (
        await client.query(
          positional,
          names.map((n) => params[n]),
        )
      ).rows as Row[];
    } finally {
      await client.query(sqlText('ops/webhooks-pg/search_path_reset')).catch(() => undefined);
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      return await inPgTransaction(client, () => fn(client));
    } finally {
      client.release();
    }
  }
}

/** Runs one statement of sql/ops/webhooks-pg/ with its `$name` parameters sent positionally. */
async function exec(client: Client, name: string, params: StateParams): Promise<Row[]> {
  const text = sqlText(`ops/webhooks-pg/${name}`);
  const names = namedParameters(text);
  const bound = pickParams(text, params);
  const positional = text
    .replace(/--[^\n]*/g, '')
    .replace(/\$([a-z_][a-z0-9_]*)/gi, (_, n: string) => `$${names.indexOf(n) + 1}`);
  return (
    await client.query(
      positional,
      names.map((n) => bound[n]),
    )
  ).rows as Row[];
}
