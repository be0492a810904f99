/**
 * A rate ladder: the open-loop rate is raised step by step until the p99 crosses a limit, and the
 * highest rate under it is the answer. Pure logic; the stage supplies the run of one step.
 */

/** What one step at one rate gave. */
export interface LadderStep {
  rate: number;
  p99Ms: number;
  /** Answers a second over the measured part of the run. */
  throughput: number;
  /** Network errors, non-2xx answers and requests never answered. */
  failed: number;
}

/** A run that did not reach its rate measured a server that fell behind, not the rate asked for. */
export const MIN_RATE_SHARE = 0.95;

/** A step holds when its p99 is under the limit, the rate was reached, and nothing failed. */
export function stepHolds(step: LadderStep, maxP99Ms: number): boolean {
  return step.p99Ms < maxP99Ms && step.throughput >= MIN_RATE_SHARE * step.rate && step.failed === 0;
}

export interface LadderResult {
  /** Every step run, in order (a rate run twice appears twice). */
  steps: LadderStep[];
  /** The highest rate that held below the first rate that did not; null when the lowest did not. */
  highest: number | null;
}

/**
 * Climbs `rates` (ascending). A rate that does not hold is run once more before the climb stops,
 * since one stall of a shared machine must not end it; a rate holds when either run held. The
 * answer is the last rate that held before the one that did not (or the top rung).
 *
 * @example await climb([250, 500, 1000], runAt, 10) // {steps: [...], highest: 500} when 1000 misses twice
 */
export async function climb(rates: readonly number[], run: (rate: number) => Promise<LadderStep>, maxP99Ms: number): Promise<LadderResult> {
  const steps: LadderStep[] = [];
  let highest: number | null = null;
  for (const rate of rates) {
    let held = false;
    for (let attempt = 0; attempt < 2 && !held; attempt++) {
      const step = await run(rate);
      steps.push(step);
      held = stepHolds(step, maxP99Ms);
    }
    if (!held) break;
    highest = rate;
  }
  return { steps, highest };
}
