import type { StateDb } from '../state/db.js';

export interface LeaseOptions {
  /** How long a lease lasts unless renewed: a dead holder's is taken over this long after its last renewal. */
  ttlMs: number;
  log(line: string): void;
}

/**
 * A lease in the shared state store: one holder at a time does a job (the webhook deliverer), the
 * others stand by. The holder renews it every third of its time; a holder that stops renewing
 * (killed, or its machine gone) loses it when it runs out, and a standby takes it at its next try.
 */
export class Lease {
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly db: StateDb,
    private readonly name: string,
    readonly holder: string,
    private readonly options: LeaseOptions,
  ) {}

  /** Takes the lease now if it is free, or null. */
  static async tryTake(db: StateDb, name: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    const lease = new Lease(db, name, holder, options);
    return (await lease.renew()) ? lease : null;
  }

  /** Waits until the lease is taken (trying every quarter of its time), or null once `stop` resolves. */
  static async waitFor(
    db: StateDb,
    name: string,
    holder: string,
    options: LeaseOptions,
    stop: Promise<void>,
  ): Promise<Lease | null> {
    let stopped = false;
    void stop.then(() => (stopped = true));
    let said = false;
    while (!stopped) {
      const lease = await Lease.tryTake(db, name, holder, options);
      if (lease) return lease;
      if (!said) options.log(`${name}: another process holds the lease; standing by`);
      said = true;
      await Promise.race([stop, new Promise((r) => setTimeout(r, Math.max(50, options.ttlMs / 4)))]);
    }
    return null;
  }

  private async renew(): Promise<boolean> {
    const now = Date.now();
    return (
      (await this.db.run('lease_take', {
        name: this.name,
        holder: this.holder,
        expires_ms: now + this.options.ttlMs,
        now_ms: now,
      })) > 0
    );
  }

  /** Renews until released; `onLost` runs once if another process took it meanwhile (this one stalled). */
  keep(onLost: () => void): void {
    this.timer = setInterval(
      () => {
        this.renew().then(
          (held) => {
            if (held) return;
            this.stopRenewing();
            this.options.log(`${this.name}: the lease was taken over; stopping`);
            onLost();
          },
          (error: Error) => this.options.log(`${this.name}: could not renew the lease: ${error.message}`),
        );
      },
      Math.max(50, this.options.ttlMs / 3),
    );
    this.timer.unref();
  }

  private stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Gives the lease up at once, so a standby need not wait for it to run out. */
  async release(): Promise<void> {
    this.stopRenewing();
    await this.db.run('lease_release', { name: this.name, holder: this.holder });
  }
}
