/**
 * Where waits for another process's DuckDB lock are reported when a caller passes no `onWait`:
 * silent for the API and tests; the command-line jobs set it to their progress line
 * (src/jobs/cli.ts), so a person never waits unseen. A module of its own, without DuckDB, so a
 * job can set it before it knows whether it will open a database at all (`--help` does not).
 */
let defaultOnWait: ((message: string) => void) | null = null;

export function reportLockWaits(onWait: ((message: string) => void) | null): void {
  defaultOnWait = onWait;
}

export const lockWaitReporter = (): ((message: string) => void) | null => defaultOnWait;
