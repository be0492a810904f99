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

/** A run whose p99 is under this share of the limit holds alone; one nearer the limit (or over it) is run twice more. */
export const CLEAR_SHARE = 0.6;
/** Runs of a rung near the limit, of which a majority must hold. */
export const NEAR_RUNS = 3;

/**
 * Climbs `rates` (ascending). A rung whose first run holds with a p99 clearly under the limit
 * (CLEAR_SHARE of it) holds; otherwise it is run NEAR_RUNS times in all and holds when most of
 * them do: one rung's p99 on a shared 2-core machine swings across the limit from run to run, and
 * a single lucky or unlucky run must not decide the answer either way. The
 * answer is the last rate that held before the one that did not (or the top rung).
 *
 * @example await climb([250, 500, 1000], runAt, 10) // {steps: [...], highest: 500} when 1000 misses twice of three
 */
export async function climb(
  rates: readonly number[],
  run: (rate: number) => Promise<LadderStep>,
  maxP99Ms: number,
): Promise<LadderResult> {
  const steps: LadderStep[] = [];
  let highest: number | null = null;
  for (const rate of rates) {
    const first = await run(rate);
    steps.push(first);
    let held = stepHolds(first, CLEAR_SHARE * maxP99Ms);
    if (!held) {
      let holding = stepHolds(first, maxP99Ms) ? 1 : 0;
      for (let attempt = 1; attempt < NEAR_RUNS; attempt++) {
        const step = await run(rate);
        steps.push(step);
        if (stepHolds(step, maxP99Ms)) holding++;
        // decided: a majority either way
        if (holding > NEAR_RUNS / 2 || attempt + 1 - holding > NEAR_RUNS / 2) break;
      }
      held = holding > NEAR_RUNS / 2;
    }
    if (!held) break;
    highest = rate;
  }
  return { steps, highest };
}

/**
 * The most `workers` workers can answer over one at full load, from CPU alone, when the load
 * generator runs on the same `cores`: one worker answers at most 1e6 / serverUs requests a second
 * (one core, the generator beside it on another), and N workers at most cores × 1e6 / (serverUs +
 * generatorUs), even if a request costs them no more CPU than it costs one worker. A bound on
 * capacities, not on rates that a p99 limit stops below them.
 *
 * @example scalingCeiling(2, 2, 330, 140) // 1.40: 2 workers cannot reach 1.7x one on these cores
 */
export function scalingCeiling(cores: number, workers: number, serverUs: number, generatorUs: number): number {
  // requests a second, in units of 1e6: each count of workers at most its cores, all of them with the generator at most the machine
  const capacity = (n: number): number => Math.min(Math.min(n, cores) / serverUs, cores / (serverUs + generatorUs));
  return capacity(workers) / capacity(1);
}
