/** Bad input from the caller (a flag, a file, a value): reported plainly, exit code 2. */
export class InputError extends Error {
  override name = 'InputError';
}

/**
 * An error's first line, trimmed, at most `max` characters: DuckDB's says what went wrong, and
 * DuckDB and Node append reader settings, SQL or stacks after it, which are for developers. A job's
 * own failure line passes `Number.POSITIVE_INFINITY`: it is what the operator acts on, kept whole.
 */
export function firstLine(error: unknown, max = 300): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim().slice(0, max);
}
