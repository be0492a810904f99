/**
 * Errors of the machine, told from errors of a file's content or of a request: the disk is full or
 * over quota, the file system is read-only, or a read or write failed in the device. Such an error
 * says nothing about the file being read or the request being answered: the same work succeeds
 * once the operator has made room, so nothing is set aside as unreadable or answered 500 for it
 * (docs/decisions.md, "A full disk"). Node's errno codes, SQLite's and PostgreSQL's codes, and
 * DuckDB's messages (it reports the operating system's text inside an IO Error) are all read here.
 */
export type MachineErrorKind = 'no_space' | 'quota' | 'read_only' | 'io';

/** Node's errno codes (and libuv's) of each kind. */
const ERRNO: Readonly<Record<string, MachineErrorKind>> = {
  ENOSPC: 'no_space',
  EDQUOT: 'quota',
  EROFS: 'read_only',
  EIO: 'io',
};

/** PostgreSQL's SQLSTATE: 53100 disk_full; 58030 io_error. */
const SQLSTATE: Readonly<Record<string, MachineErrorKind>> = { '53100': 'no_space', '58030': 'io' };

/**
 * The operating system's own texts (strerror) as DuckDB quotes them at the end of an error's first
 * line (`IO Error: Could not write file "…": No space left on device`), and DuckDB's own words
 * where it does not quote them. Read only in DuckDB's errors of the machine (IO, a failed commit or
 * checkpoint, a temp directory at its limit) and at the line's end, after any file name: a content
 * error quoting a record, or a file named after such a text, is never taken for one.
 */
const DUCKDB_KIND = /^(IO|TransactionContext|FATAL|Out of Memory) Error: /;
const AT_END: readonly [RegExp, MachineErrorKind][] = [
  [/(No space left on device|Could not write all bytes[^"]*)$/i, 'no_space'],
  [/max_temp_directory_size[^"]*$/i, 'no_space'],
  [/Disk quota exceeded$/i, 'quota'],
  [/Read-only file system$/i, 'read_only'],
  [/Input\/output error$/i, 'io'],
];
/** DuckDB's answer to every query after a fatal error (a failed checkpoint): the database, not the file. */
const INVALIDATED = /^FATAL Error: .*database has been invalidated because of a previous fatal error/;

/** What kind of machine error `error` (or an error it wraps, through `cause`) is; null for any other error. */
export function machineErrorKind(error: unknown): MachineErrorKind | null {
  for (let e: unknown = error, depth = 0; e !== null && e !== undefined && depth < 5; depth++) {
    const kind = ownKind(e);
    if (kind) return kind;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

export const isMachineError = (error: unknown): boolean => machineErrorKind(error) !== null;

function ownKind(error: unknown): MachineErrorKind | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    const errno = ERRNO[code] ?? SQLSTATE[code];
    if (errno) return errno;
    // better-sqlite3: SQLITE_FULL, and its I/O errors (SQLITE_IOERR, SQLITE_IOERR_WRITE, ...);
    // SQLITE_READONLY is left out: it also means a file opened read-only, an error of the code
    if (code === 'SQLITE_FULL') return 'no_space';
    if (code.startsWith('SQLITE_IOERR')) return 'io';
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message !== 'string' || !DUCKDB_KIND.test(message)) return null;
  const first = (message.split('\n')[0] ?? '').trimEnd();
  for (const [pattern, kind] of AT_END) if (pattern.test(first)) return kind;
  if (INVALIDATED.test(first)) {
    // its original error follows on a later line
    for (const [pattern, kind] of AT_END)
      if (message.split('\n').some((line) => pattern.test(line.replace(/["\s]+$/, '')))) return kind;
    return 'io';
  }
  return null;
}

/** In words, for a log line or an answer. */
export const MACHINE_ERROR_WORDS: Readonly<Record<MachineErrorKind, string>> = {
  no_space: 'no space left on the disk',
  quota: 'the disk quota is exceeded',
  read_only: 'the file system is read-only',
  io: 'an I/O error of the disk',
};
