import { open, stat } from 'node:fs/promises';

/** What a warmer has done so far (GET /readyz shows it). */
export interface WarmState {
  state: 'warming' | 'warm' | 'stopped' | 'failed';
  files: number;
  totalBytes: number;
  readBytes: number;
  /** Since the warmer started, or how long it took once warm. */
  seconds: number;
  error?: string;
}

/** Reads of 4 MiB: few reads through the thread pool, each still short. */
const CHUNK_BYTES = 4 * 2 ** 20;

/**
 * Reads a snapshot's serving-pack files start to end, one chunk at a time through the thread pool,
 * so that the page cache holds them before requests need them. The API answers from these files by
 * synchronous positioned reads on the event loop: a read that misses the cache waits for the disk
 * and holds every other request meanwhile, so right after the cache is emptied the trip list's p99
 * is many times what it is warm (docs/benchmarks.md). Like
 * pg_prewarm, this does not pin anything: under memory pressure the kernel still decides.
 */
export class PageCacheWarmer {
  private readonly startedAt = performance.now();
  private finishedMs: number | null = null;
  private stopRequested = false;
  private totalBytes = 0;
  private readBytes = 0;
  private status: WarmState['state'] = 'warming';
  private error: string | undefined;
  /** Settles (never rejects) when every file was read, the warmer was stopped, or a read failed. */
  readonly done: Promise<WarmState>;

  constructor(private readonly files: string[]) {
    this.done = this.run().then(
      () => this.finish(this.stopRequested ? 'stopped' : 'warm'),
      (error: unknown) => {
        this.error = error instanceof Error ? error.message : String(error);
        return this.finish('failed');
      },
    );
  }

  /** Stops after the chunk being read (the snapshot was retired: its files no longer matter). */
  stop(): void {
    this.stopRequested = true;
  }

  get state(): WarmState {
    const ms = this.finishedMs ?? performance.now() - this.startedAt;
    return {
      state: this.status, files: this.files.length, totalBytes: this.totalBytes, readBytes: this.readBytes,
      seconds: Math.round(ms / 100) / 10, ...(this.error ? { error: this.error } : {}),
    };
  }

  private finish(status: WarmState['state']): WarmState {
    this.status = status;
    this.finishedMs = performance.now() - this.startedAt;
    return this.state;
  }

  private async run(): Promise<void> {
    for (const file of this.files) this.totalBytes += (await stat(file)).size;
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (const file of this.files) {
      const handle = await open(file, 'r');
      try {
        for (;;) {
          if (this.stopRequested) return;
          const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
          if (bytesRead === 0) break;
          this.readBytes += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
  }
}
