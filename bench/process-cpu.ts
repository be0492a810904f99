import { readdirSync, readFileSync } from 'node:fs';

/** User and system CPU of a process so far (Linux: /proc/<pid>/stat, in clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat; 12 and 13 after the name
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A process's children now (Linux: /proc/<pid>/task/<tid>/children of each of its threads). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(
        ...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds of a process and every process below it, by pid: a cluster's primary and its
 * workers. Read before and after a run, the difference over the pids present both times is what
 * the tree spent (a process that ended in between is not counted: none does in the runs that use it).
 */
export function treeCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  const visit = (p: number): void => {
    try {
      out.set(p, cpuSeconds(p));
      for (const child of childPids(p)) visit(child);
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return out;
}

/** CPU seconds the tree spent between two `treeCpu` readings, and how many of its processes were in both. */
export function cpuBetween(
  before: Map<number, number>,
  after: Map<number, number>,
): { seconds: number; processes: number } {
  let seconds = 0;
  let processes = 0;
  for (const [pid, end] of after) {
    const start = before.get(pid);
    if (start === undefined) continue;
    seconds += end - start;
    processes++;
  }
  return { seconds, processes };
}
