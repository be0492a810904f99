/** Bad input from the caller (a flag, a file, a value): reported plainly, exit code 2. */
export class InputError extends Error {
  override name = 'InputError';
}
