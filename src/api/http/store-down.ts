import { isMachineError } from '../../machine-error.js';
import { ApiError } from './errors.js';

/** Node's codes for a server that cannot be reached or dropped the connection. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs of a server that is not answering now: class 08 (connection exception),
 * 57P01-57P05 (shut down, crashed, not accepting connections yet, idle session ended), 53300 (too
 * many connections), 53200 (out of memory), 25006 (a read-only standby).
 */
const DOWN_STATE = /^(08...|57P0[1-5]|53300|53200|25006)$/;

/** node-postgres's own words for a connection lost or never made. */
const DOWN_WORDS =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Whether `error` (or what it wraps) says the shared store (PostgreSQL) cannot be reached now, as
 * opposed to an error of the request or of the code: the same request succeeds once it answers.
 */
export function isStoreDown(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE.has(code) || DOWN_STATE.test(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && DOWN_WORDS.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The shared store not answering as every route answers it: 503 `storage_unavailable` with
 * Retry-After, never 500; nothing was stored or changed, so the same request succeeds once it
 * answers (docs/decisions.md, "Uploads across machines"). Null for any other error, and for a full
 * disk, which is `storage_full` (storage-full.ts).
 */
export function storeUnavailable(error: unknown, retryAfterSeconds: number): ApiError | null {
  if (isMachineError(error) || !isStoreDown(error)) return null;
  return new ApiError(
    'storage_unavailable',
    'storage unavailable: the shared store does not answer now; nothing was stored or changed, retry after the time in Retry-After',
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
