// The pace the continuous load's rest follows (src/jobs/pace.ts): files a second over the last
// 30 s, counted over the time they span (at least 5 s), by their arrival times.
import { describe, expect, it } from 'vitest';
import { Pace } from '../../src/jobs/pace.js';

const at = (seconds: number) => 1_000_000 + seconds * 1000;

describe('the pace of arrivals', () => {
  it('is none before anything arrived', () => {
    expect(new Pace().perSecond(at(0))).toBe(0);
  });

  it("is a steady stream's rate once its files span the window", () => {
    const pace = new Pace();
    for (let i = 0; i < 60; i++) pace.add(at(i / 2)); // 2 a second for 30 s
    expect(pace.perSecond(at(30))).toBeCloseTo(2, 1);
  });

  it('counts a burst after a quiet spell over the seconds it spans, not the whole window', () => {
    const pace = new Pace();
    pace.add(at(0)); // long ago: out of the window
    for (let i = 0; i < 80; i++) pace.add(at(100 + i / 10)); // 10 a second for 8 s
    expect(pace.perSecond(at(108))).toBeCloseTo(10, 0);
    // its first second is counted over 5 s: busy already, not yet at its full rate
    const early = new Pace();
    for (let i = 0; i < 10; i++) early.add(at(100 + i / 10));
    expect(early.perSecond(at(101))).toBeCloseTo(2, 5);
  });

  it('takes a few files that came together for a slow pace', () => {
    const pace = new Pace();
    for (let i = 0; i < 3; i++) pace.add(at(10));
    expect(pace.perSecond(at(10.2))).toBeCloseTo(0.6, 5);
  });

  it('forgets what arrived more than 30 s ago, also when times come out of order', () => {
    const pace = new Pace();
    pace.add(at(5));
    pace.add(at(1));
    pace.add(at(40));
    expect(pace.perSecond(at(40))).toBeCloseTo(1 / 5, 5);
    expect(pace.perSecond(at(80))).toBe(0);
  });

  it('counts the files waiting beside those added, without keeping them', () => {
    const pace = new Pace();
    pace.add(at(0));
    expect(pace.perSecond(at(1), [at(0.5), at(1)])).toBeCloseTo(3 / 5, 5);
    expect(pace.perSecond(at(1))).toBeCloseTo(1 / 5, 5);
  });
});
