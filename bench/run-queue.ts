import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where a server's wall time goes besides its own work: the kernel's scheduler statistics of each
 * thread (Linux: /proc/<pid>/task/<tid>/schedstat). A thread that is runnable but waits for a core
 * (the load generator, the other worker, a GC helper of its own or another process holds both)
 * adds that wait to every request it holds, however little CPU the request needs. Read before and
 * after a rung, it tells such a tail apart from the server's own work (its CPU) and from a stall
 * on the event loop (CPU spent, not waited).
 */

/** One thread so far: nanoseconds on a core, nanoseconds runnable but waiting for one, and time slices run. */
export interface ThreadSched {
  cpuNs: number;
  waitNs: number;
  slices: number;
}

/** A schedstat line: `<ns on cpu> <ns waiting on a run queue> <slices>`; null when it is not one. */
export function parseSchedstat(text: string): ThreadSched | null {
  const fields = text.trim().split(/\s+/).map(Number);
  if (fields.length !== 3 || fields.some((n) => !Number.isFinite(n) || n < 0)) return null;
  const [cpuNs, waitNs, slices] = fields as [number, number, number];
  return { cpuNs, waitNs, slices };
}

/** Every thread of the given processes now, keyed `pid/tid` (a process or thread gone meanwhile is left out). */
export function threadsOf(pids: Iterable<number>): Map<string, ThreadSched> {
  const out = new Map<string, ThreadSched>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const sched = parseSchedstat(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
        if (sched) out.set(`${pid}/${tid}`, sched);
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}

/** What a set of threads did between two readings, in milliseconds. */
export interface SchedSpent {
  cpuMs: number;
  waitMs: number;
  slices: number;
}

/**
 * Between two `threadsOf` readings: the main threads (the thread whose id is its process's: a
 * Node process's event loop) apart from the others (V8's GC and compiler helpers, libuv's pool,
 * DuckDB's threads). Threads present in only one reading are not counted.
 */
export function schedBetween(
  before: Map<string, ThreadSched>,
  after: Map<string, ThreadSched>,
): { main: SchedSpent; other: SchedSpent } {
  const main: SchedSpent = { cpuMs: 0, waitMs: 0, slices: 0 };
  const other: SchedSpent = { cpuMs: 0, waitMs: 0, slices: 0 };
  for (const [key, end] of after) {
    const start = before.get(key);
    if (!start) continue;
    const [pid, tid] = key.split('/');
    const into = pid === tid ? main : other;
    into.cpuMs += (end.cpuNs - start.cpuNs) / 1e6;
    into.waitMs += (end.waitNs - start.waitNs) / 1e6;
    into.slices += end.slices - start.slices;
  }
  return { main, other };
}
