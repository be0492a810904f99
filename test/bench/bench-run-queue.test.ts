// The workers stage's scheduler figures (bench/run-queue.ts): the schedstat line read right, the
// main thread told apart from the others, and a thread's CPU as the kernel counts it for this very
// process (Linux, as the bench).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseSchedstat, schedBetween, threadsOf, type ThreadSched } from '../../bench/run-queue.js';

const t = (cpuNs: number, waitNs: number, slices: number): ThreadSched => ({ cpuNs, waitNs, slices });

/** This process's main thread's utime + stime in clock ticks (fields 14 and 15 of its stat line). */
function threadTicks(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('parseSchedstat', () => {
  it('reads ns on a core, ns waiting for one and slices', () => {
    expect(parseSchedstat('3677909040 8904670269 7736\n')).toEqual(t(3677909040, 8904670269, 7736));
  });

  it('refuses what is not three counts', () => {
    expect(parseSchedstat('')).toBeNull();
    expect(parseSchedstat('1 2')).toBeNull();
    expect(parseSchedstat('1 2 3 4')).toBeNull();
    expect(parseSchedstat('1 x 3')).toBeNull();
    expect(parseSchedstat('1 -2 3')).toBeNull();
  });
});

describe('schedBetween', () => {
  it('splits main threads (tid = pid) from the others, in ms, and skips threads seen once', () => {
    const before = new Map([
      ['10/10', t(1e6, 2e6, 5)],
      ['10/11', t(0, 0, 0)],
      ['20/20', t(0, 0, 0)],
      ['10/12', t(5e6, 5e6, 1)],
    ]);
    const after = new Map([
      ['10/10', t(4e6, 3e6, 9)],
      ['10/11', t(2e6, 7e6, 3)],
      ['20/20', t(5e5, 1e6, 2)],
      ['10/13', t(9e9, 9e9, 9)],
    ]);
    expect(schedBetween(before, after)).toEqual({
      main: { cpuMs: 3 + 0.5, waitMs: 1 + 1, slices: 4 + 2 },
      other: { cpuMs: 2, waitMs: 7, slices: 3 },
    });
  });
});

describe('threadsOf', () => {
  it("counts this process's main thread's CPU as the thread's own clock does", () => {
    const key = `${process.pid}/${process.pid}`;
    const before = threadsOf([process.pid]);
    expect(before.has(key)).toBe(true);
    // the thread's own clock (utime + stime in /proc/.../stat, in 10 ms ticks), not the process's:
    // in a test worker other threads (GC, DuckDB's) spend CPU of the process at the same time
    const start = threadTicks();
    let x = 0;
    while (threadTicks() - start < 7) for (let i = 0; i < 100_000; i++) x += i;
    const after = threadsOf([process.pid]);
    const spentMs = (threadTicks() - start) * 10;
    const { main } = schedBetween(before, after);
    expect(x).toBeGreaterThan(0);
    // the ticks are 10 ms coarse: within two of them either way
    expect(main.cpuMs).toBeGreaterThan(spentMs - 20);
    expect(main.cpuMs).toBeLessThan(spentMs + 20);
    expect(main.slices).toBeGreaterThan(0);
  });

  it('leaves out a process that does not exist', () => {
    expect(threadsOf([2 ** 22 + 12345]).size).toBe(0);
  });
});
