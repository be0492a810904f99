// The workers stage's scheduler figures (bench/run-queue.ts): the schedstat line read right, the
// main thread told apart from the others, and a thread's CPU as the kernel counts it for this very
// process (Linux, as the bench).
import { describe, expect, it } from 'vitest';
import { parseSchedstat, schedBetween, threadsOf, type ThreadSched } from '../../bench/run-queue.js';

const t = (cpuNs: number, waitNs: number, slices: number): ThreadSched => ({ cpuNs, waitNs, slices });

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
    const before = new Map([['10/10', t(1e6, 2e6, 5)], ['10/11', t(0, 0, 0)], ['20/20', t(0, 0, 0)], ['10/12', t(5e6, 5e6, 1)]]);
    const after = new Map([['10/10', t(4e6, 3e6, 9)], ['10/11', t(2e6, 7e6, 3)], ['20/20', t(5e5, 1e6, 2)], ['10/13', t(9e9, 9e9, 9)]]);
    expect(schedBetween(before, after)).toEqual({
      main: { cpuMs: 3 + 0.5, waitMs: 1 + 1, slices: 4 + 2 },
      other: { cpuMs: 2, waitMs: 7, slices: 3 },
    });
  });
});

describe('threadsOf', () => {
  it("counts this process's main thread's CPU as the process's own clock does", () => {
    const key = `${process.pid}/${process.pid}`;
    const before = threadsOf([process.pid]);
    expect(before.has(key)).toBe(true);
    const start = process.cpuUsage();
    let spent = 0;
    // about 60 ms of CPU on this thread, however long a busy machine takes to give it
    for (let x = 0; spent < 60_000; x++) {
      if (x % 10_000 === 0) {
        const used = process.cpuUsage(start);
        spent = used.user + used.system;
      }
    }
    const after = threadsOf([process.pid]);
    const { main } = schedBetween(before, after);
    const used = process.cpuUsage(start);
    // the process's clock counts every thread and ticks coarser than schedstat: the main thread holds most of it
    expect(main.cpuMs).toBeGreaterThan(0.7 * 60);
    expect(main.cpuMs).toBeLessThanOrEqual((used.user + used.system) / 1000 + 5);
    expect(main.slices).toBeGreaterThan(0);
  });

  it('leaves out a process that does not exist', () => {
    expect(threadsOf([2 ** 22 + 12345]).size).toBe(0);
  });
});
