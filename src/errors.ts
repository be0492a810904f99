/** Bad input from the caller (a flag, a file, a value): reported plainly, exit code 2. */
export class InputError extends Error {
  override name = 'InputError';
}

/** An error's first line, at most 300 characters: DuckDB's says what went wrong; the rest (reader settings, SQL) is for developers. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).slice(0, 300);
}
