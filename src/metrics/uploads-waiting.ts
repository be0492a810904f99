import { Gauge, type Registry } from 'prom-client';

export interface UploadsWaiting {
  waiting: number;
  oldestSeconds: number | null;
}

/**
 * The uploads waiting in PostgreSQL for the job machine's load (with DATABASE_URL: src/intake/),
 * read from the shared store at each scrape by every API process: the same figures on every
 * machine, and still there while the job machine is down. Absent while the store does not answer.
 */
export function uploadsWaitingMetrics(registry: Registry, read: () => Promise<UploadsWaiting>): void {
  const registers = [registry];
  // one read serves both series of a scrape
  let pending: Promise<UploadsWaiting | null> | null = null;
  const once = (): Promise<UploadsWaiting | null> => {
    pending ??= read()
      .catch(() => null)
      .finally(() => setImmediate(() => (pending = null)));
    return pending;
  };
  new Gauge({
    name: 'driving_uploads_waiting',
    help: "Uploads accepted (answered 202) and committed in PostgreSQL that the job machine's load has not taken in yet",
    registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      const got = await once();
      if (got) this.set(got.waiting);
    },
  });
  new Gauge({
    name: 'driving_uploads_oldest_waiting_seconds',
    help: "Age of the oldest upload waiting in PostgreSQL for the job machine's load (0 when none waits)",
    registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      const got = await once();
      if (got) this.set(got.oldestSeconds ?? 0);
    },
  });
}
