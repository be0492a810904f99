import { watch, type FSWatcher } from 'node:fs';

/** An inotify watch of the landing area; null where the platform cannot (the poll still runs). */
export function watchFolder(dir: string, onChange: () => void): FSWatcher | null {
  try {
    const watcher = watch(dir, { persistent: false }, onChange);
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return null;
  }
}

/** A wait that a change in the landing area, or the stop signal, ends early. */
export class Wakeup {
  private pending = false;
  private resolve: (() => void) | null = null;
  private readonly onAbort = () => this.fire();

  constructor(private readonly signal?: AbortSignal) {
    signal?.addEventListener('abort', this.onAbort);
  }

  fire(): void {
    this.pending = true;
    this.resolve?.();
  }

  /** Until a change (one signalled since the last wait counts) or `ms`. */
  async wait(ms: number): Promise<void> {
    if (this.pending || this.signal?.aborted) {
      this.pending = false;
      return;
    }
    await this.until(ms, true);
    this.pending = false;
  }

  /** `ms`, or until the stop signal; changes do not end it. */
  async sleep(ms: number): Promise<void> {
    await this.until(ms, false);
  }

  private until(ms: number, onChange: boolean): Promise<void> {
    return new Promise((done) => {
      const finish = () => {
        clearTimeout(timer);
        this.resolve = null;
        this.signal?.removeEventListener('abort', finish);
        done();
      };
      const timer = setTimeout(finish, ms);
      if (onChange) this.resolve = finish;
      this.signal?.addEventListener('abort', finish);
    });
  }

  close(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}
