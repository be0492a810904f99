import pg from 'pg';
import { sqlText } from '../db/sql.js';
import { namedParameters } from '../state/db.js';
import { poolWithSchema } from '../state/pg-schema.js';

/** Lock id (pg_advisory_xact_lock) that orders the upload queue's schema creation between processes. */
const UPLOADS_SCHEMA_LOCK_ID = 72_657_003;

/** The channel an accepted upload is announced on (sql/ops/uploads-pg/put.sql); the load LISTENs on it. */
export const UPLOADS_CHANNEL = 'driving_uploads';

// bigint columns (seqs, counts) are below 2^53: numbers, not strings
pg.types.setTypeParser(20, (value: string) => Number(value));

/** Content read from the queue at once, about (a forwarded piece of a partner file is up to 16 MiB). */
const PAGE_BYTES = 64 * 2 ** 20;

export interface WaitingUpload {
  seq: number;
  name: string;
  content: Buffer;
}

export interface UploadBacklog {
  waiting: number;
  /** Seconds since the oldest waiting upload was accepted; null when none waits. */
  oldestSeconds: number | null;
}

type Param = string | number | Buffer | null;

/**
 * SDK uploads in PostgreSQL (with DATABASE_URL; docs/decisions.md, "Uploads across machines"): an
 * API machine commits each accepted upload here before its 202, whichever machine took it; the job
 * machine's load takes them into its landing area and releases them (src/intake/take-in.ts). The
 * tables of sql/ops/uploads-pg/, in the `uploads` schema of the state store's database.
 */
export class UploadQueue {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<UploadQueue> {
    // idle connections do not keep a finished job alive
    const pool = await poolWithSchema(
      {
        connectionString: url,
        max: 4,
        idleTimeoutMillis: 5_000,
        allowExitOnIdle: true,
        // a server that does not answer is an outage the caller reports (503), not a request held for ever
        connectionTimeoutMillis: 5_000,
      },
      UPLOADS_SCHEMA_LOCK_ID,
      sqlText('ops/uploads-pg/schema'),
    );
    return new UploadQueue(pool);
  }

  /**
   * Commits one accepted upload (its landing file's name and bytes) for the load of `cell` (null:
   * any load) and wakes the loads; resolves once committed. A name already waiting is left as it is.
   */
  async put(name: string, appId: string, acceptedAt: Date, content: Buffer, cell: string | null = null): Promise<void> {
    await exec(this.pool, 'put', { name, app: appId, accepted_at: acceptedAt.toISOString(), content, cell });
  }

  /** The oldest `limit` uploads waiting for the load of `cell` (null: every one), in acceptance order. */
  async waiting(limit: number, cell: string | null = null, maxBytes = PAGE_BYTES): Promise<WaitingUpload[]> {
    return (await exec(this.pool, 'waiting', { limit, cell, max_bytes: maxBytes })).map((r) => ({
      seq: Number(r['seq']),
      name: String(r['name']),
      content: r['content'] as Buffer,
    }));
  }

  /** Releases uploads the load holds durably now. */
  async release(seqs: number[]): Promise<void> {
    if (seqs.length > 0) await exec(this.pool, 'release', { seqs: JSON.stringify(seqs) });
  }

  /** What waits for the load of `cell` (null: for any load). */
  async backlog(cell: string | null = null): Promise<UploadBacklog> {
    const [row] = await exec(this.pool, 'backlog', { cell });
    const oldest = row?.['oldest_seconds'];
    return {
      waiting: Number(row?.['waiting'] ?? 0),
      oldestSeconds: oldest === null || oldest === undefined ? null : Math.max(0, Number(oldest)),
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const shared = new Map<string, Promise<UploadQueue>>();

/** The queue at `url`, opened once per process and shared (every upload of an API process goes through it). */
export function sharedUploadQueue(url: string): Promise<UploadQueue> {
  let queue = shared.get(url);
  if (!queue) {
    queue = UploadQueue.open(url);
    shared.set(url, queue);
    // a server down at the first upload is asked again at the next
    queue.catch(() => shared.delete(url));
  }
  return queue;
}

export async function closeUploadQueues(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => null))?.close()));
}

/** Runs one statement of sql/ops/uploads-pg/ with its `$name` parameters sent positionally. */
async function exec(client: pg.Pool, name: string, params: Record<string, Param>): Promise<Record<string, unknown>[]> {
  const text = sqlText(`ops/uploads-pg/${name}`);
  const names = namedParameters(text);
  for (const n of names) if (!(n in params)) throw new Error(`uploads SQL parameter $${n} has no value`);
  const positional = text
    .replace(/--[^\n]*/g, '')
    .replace(/\$([a-z_][a-z0-9_]*)/gi, (_, n: string) => `$${names.indexOf(n) + 1}`);
  return (
    await client.query(
      positional,
      names.map((n) => params[n]),
    )
  ).rows as Record<string, unknown>[];
}
