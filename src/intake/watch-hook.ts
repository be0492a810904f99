import { firstLine } from '../errors.js';
import type { Progress } from '../progress.js';
import { resolveDatabaseUrl } from '../state/open.js';
import type { UploadListener } from './listen.js';
import { acceptedUploadsWaiting, takeInForLoad } from './from-store.js';
import type { UploadBacklog } from './upload-queue.js';

/**
 * The continuous load's view of the uploads waiting in PostgreSQL (with DATABASE_URL): a listener
 * that wakes it as each is committed, and the look its poll takes, so that an upload whose
 * notification was lost (the connection down at that moment) waits one poll at most.
 */
export class AcceptedUploads {
  /** What the last look saw (the watch's metrics); null before the first, or while PostgreSQL does not answer. */
  last: UploadBacklog | null = null;
  private said = false;

  private constructor(
    private readonly listener: UploadListener,
    private readonly progress: Progress,
  ) {}

  /** Null without DATABASE_URL: uploads are written into the landing area, which the watch already follows. */
  static async start(wake: () => void, progress: Progress): Promise<AcceptedUploads | null> {
    const url = resolveDatabaseUrl();
    if (!url) return null;
    // pg is loaded only with DATABASE_URL
    const { UploadListener } = await import('./listen.js');
    return new AcceptedUploads(new UploadListener(url, wake, progress), progress);
  }

  /** Whether any upload waits; false while PostgreSQL does not answer (said once an outage). */
  async any(): Promise<boolean> {
    try {
      this.last = await acceptedUploadsWaiting();
      this.said = false;
      return (this.last?.waiting ?? 0) > 0;
    } catch (error) {
      this.last = null;
      if (!this.said) this.progress(`load: uploads in PostgreSQL not looked at (${firstLine(error)}); trying again`);
      this.said = true;
      return false;
    }
  }

  /**
   * Takes the waiting uploads into the landing area ahead of the batch (the batch's load takes in
   * what comes after). A failure is left to the batch's own take-in, which reports it.
   */
  async takeIn(landingDir: string): Promise<void> {
    await takeInForLoad(landingDir, { doing: () => undefined }, this.progress).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
