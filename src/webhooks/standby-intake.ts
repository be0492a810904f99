import type { Progress } from '../progress.js';
import { intakeEventFiles, type IntakeResult } from './intake.js';
import type { OutboxStore } from './outbox-store.js';

/**
 * Takes this machine's event files into a shared (PostgreSQL) outbox while another deliverer holds
 * the lease: the files are written on the job machine, and the deliverer there may be the standby.
 * Intake is idempotent by event id, so the holder taking in its own machine's files meanwhile
 * changes nothing. `stop` waits for the intake under way, then says what was taken in.
 */
export function intakeWhileStandingBy(
  outbox: OutboxStore,
  eventsDir: string,
  pollMs: number,
  clock: () => Date,
  progress: Progress,
): { stop(): Promise<IntakeResult> } {
  const total: IntakeResult = { files: 0, events: 0, known: 0, rejected: 0, failedFiles: 0 };
  const failures = new Map<string, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        const more = await intakeEventFiles(outbox, eventsDir, clock(), failures, progress);
        total.files += more.files;
        total.events += more.events;
        total.known += more.known;
        total.rejected += more.rejected;
        total.failedFiles += more.failedFiles;
        if (more.events > 0)
          progress(`deliver: standing by, took ${more.events} event(s) in from ${more.files} file(s)`);
      } catch (error) {
        // the outbox unreachable a moment: the files stay and are taken in at a later turn
        progress(`deliver: standing by, intake failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, pollMs);
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake();
      await loop;
      return total;
    },
  };
}
