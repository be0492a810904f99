// Nothing here loads DuckDB: every job imports this module first, also to print its usage or
// refuse a flag, and loading DuckDB's library costs more CPU than the rest of such a process.
import { reportLockWaits } from '../db/lock-waits.js';
import { firstLine, InputError } from '../errors.js';
import { stderrProgress } from '../progress.js';
import { setting } from '../settings.js';
import { keepRunningWhenOutputFails } from './output.js';

// Every file a job or the API creates may hold personal data (warehouse, points, slots, serving
// files, landing and event files, passport): readable by its owner only, 0600, and folders 0700,
// whatever the shell's umask. DuckDB and Node create files through the process umask, so this one
// line covers every writer; every entry point in jobs/ imports this module first.
process.umask(0o077);

// A job waiting for another process's lock says so at once and every few seconds, naming the
// holder, instead of sitting silent until it gives up.
reportLockWaits(stderrProgress);

// a closed pipe ends the job quietly; a log it cannot write (a full disk) does not end it
keepRunningWhenOutputFails();

/**
 * The one exit-code rule of every job (docs/jobs.md):
 * 0 done; 1 an internal failure (a bug or the machine: the message says what, DRIVING_DEBUG=1 adds
 * the stack); 2 bad input or usage (a flag, a value, a file or folder given, a data folder without
 * apps); 3 a resource is busy (another process holds a database, or the port is taken): try again
 * later; 4 a check stopped a publish (the last good snapshot stays served); 5 nothing to do, only
 * when asked for (`score.js --fail-if-nothing`): by default an empty new install is not a failure.
 */
export const EXIT = { ok: 0, internal: 1, input: 2, busy: 3, check: 4, nothing: 5 } as const;

export function exitCodeOf(error: unknown): number {
  if (error instanceof InputError) return EXIT.input;
  // by name: DatabaseBusyError (db/open.ts) and CheckFailedError (warehouse/checks.ts) live beside
  // DuckDB, which this module must not load
  const name = (error as Error | null)?.name;
  if (name === 'DatabaseBusyError') return EXIT.busy;
  if (name === 'CheckFailedError') return EXIT.check;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') return EXIT.busy;
  // the PostgreSQL state store (--database-url) not answering: run again when it does
  if (code !== undefined && UNREACHABLE.has(code)) return EXIT.busy;
  return EXIT.internal;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Says a failure in one line on stderr (the stack only with DRIVING_DEBUG) and sets the exit code. */
export function reportFailure(name: string, error: unknown, json = false): number {
  const code = exitCodeOf(error);
  const message = firstLine(error, Number.POSITIVE_INFINITY);
  if (json)
    process.stdout.write(`${JSON.stringify({ ok: false, job: name, exitCode: code, error: message }, null, 2)}\n`);
  process.stderr.write(`${name}: failed: ${message}\n`);
  if (code === EXIT.internal && error instanceof Error && setting('DRIVING_DEBUG'))
    process.stderr.write(`${error.stack}\n`);
  process.exitCode = code;
  return code;
}

export interface JobOutcome<T> {
  result: T;
  /** The one line every job ends with. */
  summary: string;
  /** Non-zero when the job finished but not everything succeeded (e.g. a file could not be read). */
  exitCode?: number;
  /** The summary goes to stderr when stdout carries the job's data (sql.js's CSV). */
  summaryToStderr?: boolean;
}

/**
 * Runs a job the same way for every entry point: progress on stderr, then either the one-line
 * summary or (with --json) the result as JSON on stdout; the exit code by the rule above.
 */
export async function runJob<T>(
  name: string,
  json: boolean,
  job: () => Promise<JobOutcome<T>>,
  onEnd?: JobEnd<T>,
): Promise<void> {
  const startedAt = new Date();
  let result: T | undefined;
  try {
    const outcome = await job();
    const { summary, exitCode = 0, summaryToStderr = false } = outcome;
    result = outcome.result;
    if (json)
      process.stdout.write(`${JSON.stringify({ ok: exitCode === 0, job: name, ...asObject(result) }, null, 2)}\n`);
    else (summaryToStderr ? process.stderr : process.stdout).write(`${name}: ${summary}\n`);
    process.exitCode = exitCode;
  } catch (error) {
    reportFailure(name, error, json);
  }
  // what happens after a run (its metrics file) never changes the run's exit code
  try {
    await onEnd?.({
      startedAt,
      seconds: (Date.now() - startedAt.getTime()) / 1000,
      exitCode: Number(process.exitCode ?? 0),
      result,
    });
  } catch (error) {
    process.stderr.write(`${name}: after the run: ${firstLine(error, Number.POSITIVE_INFINITY)}\n`);
  }
}

/** Called once a job has ended, successful or not (`result` only when it finished). */
export type JobEnd<T> = (run: {
  startedAt: Date;
  seconds: number;
  exitCode: number;
  result?: T;
}) => void | Promise<void>;

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { result: value };
}

/**
 * For yargs' `.fail()`: a wrong flag or value is bad input (exit 2), said in one line; a job with
 * sub-commands lists them, so a mistyped command shows what it could have been.
 */
export function usageFailure(
  name: string,
  commands: string[] = [],
): (message: string | undefined, error: Error | undefined) => never {
  return (message, error) => {
    // yargs spreads some messages over lines ("Invalid values:\n  Argument: ..."): one line here
    const text = (message ?? error?.message ?? 'invalid arguments').replace(/\s*\n\s*/g, ' ').trim();
    const list = commands.length > 0 ? `; commands: ${commands.join(', ')}` : '';
    process.stderr.write(`${name}: ${text}${list} (see --help)\n`);
    process.exit(EXIT.input);
  };
}

/** For yargs' `.check()` on number flags: `--port abc` parses to NaN, which is bad input. */
export function wholeNumbers(
  flags: Record<string, { min: number; max: number }>,
): (argv: Record<string, unknown>) => true {
  return (argv) => {
    for (const [flag, { min, max }] of Object.entries(flags)) {
      const key = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      const value = argv[key];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new Error(`--${flag} must be a whole number from ${min} to ${max}`);
      }
    }
    return true;
  };
}
