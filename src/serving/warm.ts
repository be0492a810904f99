import { open, stat } from 'node:fs/promises';

/** What a warmer has done so far (GET /readyz shows it). */
export interface WarmState {
  state: 'warming' | 'warm' | 'stopped' | 'failed';
  files: number;
  totalBytes: number;
  readBytes: number;
  /** Files not read again: this process read them whole for an earlier snapshot. */
  alreadyWarm: number;
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
  private alreadyWarm = 0;
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
      state: this.status,
      files: this.files.length,
      totalBytes: this.totalBytes,
      readBytes: this.readBytes,
      alreadyWarm: this.alreadyWarm,
      seconds: Math.round(ms / 100) / 10,
      ...(this.error ? { error: this.error } : {}),
    };
  }

  private finish(status: WarmState['state']): WarmState {
    this.status = status;
    this.finishedMs = performance.now() - this.startedAt;
    return this.state;
  }

  private async run(): Promise<void> {
    const identities = new Map<string, string>();
    for (const file of this.files) {
      const st = await stat(file);
      this.totalBytes += st.size;
      identities.set(file, `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`);
    }
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (const file of this.files) {
      if (this.stopRequested) return;
      const identity = identities.get(file) as string;
      // a layer an earlier snapshot of this process already read: a publish every few seconds
      // (load.js --watch) names the same base and older layers again, and reading them again at
      // every switch would keep a core busy copying what the cache holds
      if (warmed.has(identity)) {
        warmed.delete(identity);
        warmed.add(identity);
        this.readBytes += Number(identity.split(':')[2]);
        this.alreadyWarm++;
        continue;
      }
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
      rememberWarmed(identity);
    }
  }
}

/**
 * Files this process has read start to end, by identity (device, inode, size, modification time),
 * the most recently used last; bounded, as every publish adds a few.
 */
const warmed = new Set<string>();
const WARMED_KEPT = 4096;

function rememberWarmed(identity: string): void {
  warmed.add(identity);
  for (const oldest of warmed) {
    if (warmed.size <= WARMED_KEPT) break;
    warmed.delete(oldest);
  }
}
