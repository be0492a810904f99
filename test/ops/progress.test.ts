// A long run of steps (a score backfill) reports as one line updating in place on a terminal and
// as a dozen lines elsewhere. The clock is injected: nothing here depends on the machine's speed.
import { describe, expect, it } from 'vitest';
import { grouped, steps } from '../../src/progress.js';

function run(total: number, tty: boolean, msPerStep: number, everyMs?: number): { lines: string[]; written: string } {
  let now = 0;
  const lines: string[] = [];
  let written = '';
  const counter = steps(total, 'score:', (m) => lines.push(m), {
    tty,
    write: (t) => (written += t),
    clock: () => now,
    ...(everyMs ? { everyMs } : {}),
  });
  for (let i = 1; i <= total; i++) {
    now += msPerStep;
    counter.step(`as of day ${i}`);
  }
  counter.done();
  return { lines, written };
}

describe('step progress', () => {
  it('without a terminal: a line at the first step, at each further tenth and at the last', () => {
    const { lines, written } = run(5036, false, 40);
    expect(written).toBe('');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('score: 1/5036 (0%, about 202 s left) as of day 1');
    expect(lines[1]).toMatch(/^score: 504\/5036 \(10%, about 182 s left\) as of day 504$/);
    expect(lines[10]).toBe('score: 5036/5036 (100%) as of day 5036');
  });

  it('without a terminal: also a line when a step is slow to come (every 30 s by default)', () => {
    // 20 steps of 20 s: a line at each tenth (every other step); 20 s between steps is under 30 s
    expect(run(20, false, 20_000).lines).toHaveLength(11);
    // 4 steps of 40 s: every step is 30 s after the last line
    expect(run(4, false, 40_000).lines).toHaveLength(4);
  });

  it('on a terminal: one line redrawn in place at most ten times a second, ended by a newline', () => {
    const { lines, written } = run(1000, true, 5);
    expect(lines).toEqual([]);
    const draws = written.split('\r').filter((d) => d !== '');
    // 5 s of steps at 5 ms: the first step, a redraw every 100 ms after it (20 steps: 49 more), the last
    expect(draws).toHaveLength(51);
    expect(draws.every((d) => d.startsWith('\x1b[2K['))).toBe(true);
    expect(written.endsWith('[########################] score: 1000/1000 (100%) as of day 1000\n')).toBe(true);
    expect(written.split('\n')).toHaveLength(2);
  });
});

describe('grouped', () => {
  it("writes counts as toLocaleString('en-US') does", () => {
    for (const n of [0, 7, 999, 1000, 4000, 12345, 999999, 1000000, 13772588, 123456789012, -1, -1234567]) {
      expect(grouped(n)).toBe(n.toLocaleString('en-US'));
    }
  });
});
