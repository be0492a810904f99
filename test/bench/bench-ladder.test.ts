// The workers stage's rate ladder: which rate it reports as the highest with a p99 under the
// limit, and when it stops climbing. Each rung's outcome is given by hand (no server, no clock).
import { describe, expect, it } from 'vitest';
import { climb, scalingCeiling, stepHolds, type LadderStep } from '../../bench/ladder.js';

const step = (rate: number, p99Ms: number, extra: Partial<LadderStep> = {}): LadderStep => ({
  rate,
  p99Ms,
  throughput: rate,
  failed: 0,
  ...extra,
});

/** A run per rung from a table of p99s per rate, each attempt taking the next value; records the rates asked. */
function runs(table: Record<number, number[]>): { asked: number[]; run: (rate: number) => Promise<LadderStep> } {
  const asked: number[] = [];
  return {
    asked,
    run: async (rate) => {
      asked.push(rate);
      const p99 = table[rate]?.shift();
      if (p99 === undefined) throw new Error(`rate ${rate} run more often than the test expects`);
      return step(rate, p99);
    },
  };
}

describe('a rung holds', () => {
  it('when its p99 is under the limit, it reached 95% of its rate and nothing failed', () => {
    expect(stepHolds(step(1000, 9.99), 10)).toBe(true);
    expect(stepHolds(step(1000, 10), 10)).toBe(false);
    expect(stepHolds(step(1000, 2, { throughput: 949 }), 10)).toBe(false);
    expect(stepHolds(step(1000, 2, { throughput: 950 }), 10)).toBe(true);
    expect(stepHolds(step(1000, 2, { failed: 1 }), 10)).toBe(false);
  });
});

describe('the ladder', () => {
  it('reports the last rate under the limit and stops at the first that misses twice', async () => {
    const { asked, run } = runs({ 250: [2], 500: [3], 1000: [12, 15] });
    const result = await climb([250, 500, 1000, 2000], run, 10);
    expect(result.highest).toBe(500);
    expect(asked).toEqual([250, 500, 1000, 1000]);
    expect(result.steps.map((s) => s.p99Ms)).toEqual([2, 3, 12, 15]);
  });

  it('goes on past a rung that missed once and held on its two other runs', async () => {
    const { asked, run } = runs({ 250: [2], 500: [30, 4, 5], 1000: [11, 11] });
    const result = await climb([250, 500, 1000], run, 10);
    expect(result.highest).toBe(500);
    expect(asked).toEqual([250, 500, 500, 500, 1000, 1000]);
  });

  it('takes a clear first run alone, and runs one near the limit three times, the majority deciding', async () => {
    // 5.9 ms is under 60% of the limit: one run; 8 ms holds but is near: the two runs after it decide
    const near = runs({ 250: [5.9], 500: [8, 12, 9], 1000: [8, 12, 13] });
    const result = await climb([250, 500, 1000], near.run, 10);
    expect(near.asked).toEqual([250, 500, 500, 500, 1000, 1000, 1000]);
    expect(result.highest).toBe(500);
    // a near run followed by a clear hold is decided after two runs
    const decided = runs({ 250: [8, 3] });
    expect((await climb([250], decided.run, 10)).highest).toBe(250);
    expect(decided.asked).toEqual([250, 250]);
  });

  it('never reports a rate above one that missed, even if a higher one would hold', async () => {
    const { asked, run } = runs({ 250: [2], 500: [20, 20], 1000: [3] });
    expect((await climb([250, 500, 1000], run, 10)).highest).toBe(250);
    expect(asked).not.toContain(1000);
  });

  it('reports the top rung when every rung holds, and none when the lowest misses', async () => {
    expect((await climb([250, 500], runs({ 250: [1], 500: [1] }).run, 10)).highest).toBe(500);
    expect((await climb([250, 500], runs({ 250: [11, 11] }).run, 10)).highest).toBeNull();
  });
});

describe('the ceiling of 2 workers over one', () => {
  it('is the cores over the server and generator CPU a request, when the generator shares the cores', () => {
    // one worker: 1e6 / 300 = 3,333 req/s; two with the generator: 2e6 / (300 + 100) = 5,000 req/s
    expect(scalingCeiling(2, 2, 300, 100)).toBeCloseTo(1.5, 10);
    expect(scalingCeiling(2, 2, 330, 140)).toBeCloseTo(660 / 470, 10);
  });
  it('is 1 when the generator alone would fill the cores beside one worker', () => {
    // one worker and the generator: 2 cores / (300 + 400) us, less than one worker's core
    expect(scalingCeiling(2, 2, 300, 400)).toBe(1);
  });
  it('is the workers (or the cores) when the generator costs nothing', () => {
    expect(scalingCeiling(2, 2, 300, 0)).toBe(2);
    expect(scalingCeiling(4, 2, 300, 0)).toBe(2);
    expect(scalingCeiling(2, 4, 300, 0)).toBe(2);
  });
});
