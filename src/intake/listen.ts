import pg from 'pg';
import { UPLOADS_CHANNEL } from './upload-queue.js';

/** How long the listener waits before connecting again after a loss, doubled per failure up to 30 s. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * A dedicated connection LISTENing for accepted uploads (sql/ops/uploads-pg/put.sql NOTIFYs at each
 * commit): `onUpload` wakes the continuous load at once. A lost connection is made again (a
 * PostgreSQL restart, a failover); the load's poll looks at the queue meanwhile, so nothing waits
 * for a notification that was lost.
 */
export class UploadListener {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onUpload: () => void,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    void this.connect();
  }

  /** Whether the connection is listening now. */
  get listening(): boolean {
    return this.client !== null;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000 });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      if (this.failures === 0 && error)
        this.log(`load: uploads in PostgreSQL: notifications lost (${error.message}); listening again`);
      this.retry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === UPLOADS_CHANNEL) this.onUpload();
    });
    try {
      await client.connect();
      await client.query(`listen ${UPLOADS_CHANNEL}`);
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
    // uploads committed while nobody listened are found at once, not at the next poll
    this.onUpload();
  }

  private retry(): void {
    const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.failures);
    this.failures++;
    this.timer = setTimeout(() => void this.connect(), wait);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
