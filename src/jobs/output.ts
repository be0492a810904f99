/**
 * What a job does when its own output cannot be written. Node ends a process when a write to
 * stdout or stderr fails and nothing listens for the error; a log on a full disk (the shipped
 * crontab appends to one, a unit's may too) would so end the continuous load, and nothing would
 * load until someone started it again. A job goes on without the lines instead, and counts them
 * (the continuous load's metrics file carries the count: `driving_load_log_write_errors_total`).
 * A reader that closed the pipe (`node jobs/sql.js ... | head`) is that reader's way of saying
 * "enough": the job ends quietly with what was written.
 */
let failedWrites = 0;

/** Writes to stdout or stderr that failed since the process started. */
export const outputWriteErrors = (): number => failedWrites;

export function keepRunningWhenOutputFails(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      failedWrites++;
    });
  }
}
