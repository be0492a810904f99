import { describe, expect, it } from 'vitest';
import { layersToMerge } from '../../src/serving/layers.js';

/** Replays daily deltas of equal weight: the stack each day, oldest first. */
function replay(base: number, days: number, delta = 1): number[][] {
  let stack = [base];
  const out: number[][] = [];
  for (let d = 0; d < days; d++) {
    stack = [...stack, delta];
    const k = layersToMerge(stack);
    stack = [...stack.slice(0, stack.length - k), stack.slice(stack.length - k).reduce((a, b) => a + b, 0)];
    out.push(stack);
  }
  return out;
}

describe('layersToMerge', () => {
  it('keeps a small delta on a big base, and merges layers that are not at least twice the weight of those merged above them', () => {
    expect(layersToMerge([100, 1])).toBe(1);
    expect(layersToMerge([2, 1])).toBe(1);
    expect(layersToMerge([1, 1])).toBe(2);
    expect(layersToMerge([100, 4, 2, 1, 1])).toBe(4);
    expect(layersToMerge([6, 4, 2, 1, 1])).toBe(5);
    expect(layersToMerge([10, 0])).toBe(1);
  });

  it('counts in binary over equal daily deltas: few layers, weights falling by half, the base rewritten when the deltas reach half of it', () => {
    const days = replay(90, 200);
    expect(days[0]).toEqual([90, 1]);
    expect(days[1]).toEqual([90, 2]);
    expect(days[2]).toEqual([90, 2, 1]);
    expect(days[3]).toEqual([90, 4]);
    for (const stack of days) {
      expect(stack.length).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(200)));
      for (let i = 1; i < stack.length; i++) expect(stack[i - 1]).toBeGreaterThanOrEqual(2 * (stack[i] as number));
    }
    // the base grows only by whole merges, and total weight is kept
    days.forEach((stack, d) => expect(stack.reduce((a, b) => a + b, 0)).toBe(90 + d + 1));
    expect(days.filter((stack, d) => stack.length === 1 && d > 0).length).toBeGreaterThan(0);
  });

  it('merges whatever the weights when there would be more layers than the cap', () => {
    expect(layersToMerge([1000, 100, 10, 1], 2, 3)).toBe(2);
  });
});
