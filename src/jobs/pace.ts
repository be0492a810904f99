// The pace of arrivals the continuous load's rest follows (src/jobs/watch.ts).

/** How far back the pace of arrivals is counted, and the shortest time it is counted over. */
const PACE_WINDOW_MS = 30_000;
const PACE_MIN_SPAN_MS = 5_000;

/**
 * Files a second that arrived over the last `windowMs` (from their arrival times, as batches take
 * them), counted over the time they span, at least `minSpanMs`: a burst after a quiet spell is
 * busy from its first seconds, not once it fills the window; a few files that came together are not.
 */
export class Pace {
  private readonly times: number[] = [];

  constructor(
    private readonly windowMs = PACE_WINDOW_MS,
    private readonly minSpanMs = PACE_MIN_SPAN_MS,
  ) {}

  add(arrivedAt: number): void {
    this.times.push(arrivedAt);
  }

  /**
   * The pace at `now`, counting besides what was added the arrival times in `waiting` (files that
   * arrived and wait for a batch, not added yet).
   */
  perSecond(now: number, waiting: Iterable<number> = []): number {
    const from = now - this.windowMs;
    while (this.times.length > 0 && (this.times[0] as number) < from) this.times.shift();
    const inWindow = [...this.times, ...waiting].filter((t) => t >= from);
    if (inWindow.length === 0) return 0;
    const span = Math.max(this.minSpanMs, now - Math.min(...inWindow));
    return inWindow.length / (span / 1000);
  }
}
