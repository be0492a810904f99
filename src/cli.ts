import { DatabaseBusyError } from './db/open.js';
import { InputError } from './errors.js';
import { CheckFailedError } from './publish/checks.js';

// Every file a job or the API creates may hold personal data (warehouse, points, slots, serving
// files, landing and event files, passport): readable by its owner only, 0600, and folders 0700,
// whatever the shell's umask. DuckDB and Node create files through the process umask, so this one
// line covers every writer; every entry point in jobs/ imports this module first.
process.umask(0o077);

export interface JobOutcome<T> {
  result: T;
  /** The one line every job ends with. */
  summary: string;
  /** Non-zero when the job finished but not everything succeeded (e.g. a file could not be read). */
  exitCode?: number;
}

/**
 * Runs a job the same way for every entry point: progress on stderr, then either the one-line
 * summary or (with --json) the result as JSON on stdout; exit code 0, or 2 for bad input,
 * 3 when another process holds a database, 4 when a check stopped a publish, 1 otherwise.
 */
export async function runJob<T>(name: string, json: boolean, job: () => Promise<JobOutcome<T>>): Promise<void> {
  try {
    const { result, summary, exitCode = 0 } = await job();
    process.stdout.write(json ? `${JSON.stringify({ ok: exitCode === 0, job: name, ...asObject(result) }, null, 2)}\n` : `${name}: ${summary}\n`);
    process.exitCode = exitCode;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof InputError ? 2 : error instanceof DatabaseBusyError ? 3 : error instanceof CheckFailedError ? 4 : 1;
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, job: name, error: message }, null, 2)}\n`);
    process.stderr.write(`${name}: failed: ${message}\n`);
    if (code === 1 && error instanceof Error && process.env['DRIVING_DEBUG']) process.stderr.write(`${error.stack}\n`);
    process.exitCode = code;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
}

/** For yargs' `.fail()`: a wrong flag or value is bad input (exit 2), said in one line. */
export function usageFailure(name: string): (message: string | undefined, error: Error | undefined) => never {
  return (message, error) => {
    process.stderr.write(`${name}: ${message ?? error?.message ?? 'invalid arguments'} (see --help)\n`);
    process.exit(2);
  };
}
