import { Gauge, type Registry } from 'prom-client';
import type { FollowStatus } from '../follow/status.js';

/**
 * An API machine's follower series (serve.js --follow), read from the status its follower writes
 * (src/follow/status.ts). Every worker of the machine reads the same file: over a cluster they take
 * the workers' maximum. Absent while the follower has written nothing.
 */
export function followMetrics(
  registry: Registry,
  status: () => FollowStatus | null,
  servedVersion: () => number | null,
  now: () => Date = () => new Date(),
): void {
  const registers = [registry];
  const started = now().getTime();
  new Gauge({
    name: 'driving_follow_lag_seconds',
    help: "Seconds since this API machine's copy was last the job machine's newest publish (since the follower started, while it never was); grows while the job machine cannot be read or the copy fails",
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      const s = status();
      if (!s) return;
      const since = s.inSyncAt ? Date.parse(s.inSyncAt) : started;
      this.set(Math.max(0, (now().getTime() - since) / 1000));
    },
  });
  new Gauge({
    name: 'driving_follow_failing',
    help: "1 while the follower's last check or copy of the job machine's publishes failed (the last copy stays served)",
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      const s = status();
      if (s) this.set(s.lastError !== null ? 1 : 0);
    },
  });
  new Gauge({
    name: 'driving_follow_versions_behind',
    help: "The job machine's newest published version as last read, minus the version this machine serves",
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      const source = status()?.sourceVersion;
      const served = servedVersion();
      if (source != null) this.set(Math.max(0, source - (served ?? 0)));
    },
  });
  new Gauge({
    name: 'driving_follow_last_copy_bytes',
    help: "Bytes the follower's last copy of a publish moved: file data sent (literal, what changed) and on the wire (rsync's protocol included)",
    labelNames: ['kind'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      const copy = status()?.lastCopy;
      if (!copy) return;
      this.set({ kind: 'literal' }, copy.literalBytes);
      this.set({ kind: 'wire' }, copy.wireBytes);
    },
  });
  new Gauge({
    name: 'driving_follow_copies',
    help: 'Publishes the follower copied and switched to since it started',
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      const s = status();
      if (s) this.set(s.copies);
    },
  });
}
