import type { Progress } from './progress.js';

export interface Heartbeat {
  /** Progress that also counts as a sign of life. */
  progress: Progress;
  /** What the job is doing now, said again (with the seconds so far) whenever it has been silent for a while. */
  doing(what: string): void;
  /** One check: says `doing` again when nothing was said for `everyMs` (the timer calls it every second). */
  tick(): void;
  stop(): void;
}

/**
 * Keeps a long job from going silent: a step that takes minutes (opening a large warehouse, the
 * first file on a cold cache, a publish) is named when it starts and named again every `everyMs`
 * until something else is said, so an operator never stares at a quiet terminal wondering.
 *
 * @example const beat = heartbeat(progress); beat.doing('load: opening the warehouse'); ... beat.stop();
 */
export function heartbeat(
  progress: Progress,
  options: { everyMs?: number; clock?: () => number; timer?: boolean } = {},
): Heartbeat {
  const everyMs = options.everyMs ?? 5_000;
  const clock = options.clock ?? (() => Date.now());
  let lastSaid = clock();
  let doing: { what: string; since: number } | null = null;
  const say: Progress = (message) => {
    lastSaid = clock();
    progress(message);
  };
  const beat: Heartbeat = {
    progress: say,
    doing(what) {
      doing = { what, since: clock() };
    },
    tick() {
      const now = clock();
      if (doing && now - lastSaid >= everyMs) say(`${doing.what} (${Math.floor((now - doing.since) / 1000)} s so far)`);
    },
    stop() {
      if (interval) clearInterval(interval);
    },
  };
  const interval = options.timer === false ? null : setInterval(() => beat.tick(), 1_000);
  interval?.unref();
  return beat;
}
