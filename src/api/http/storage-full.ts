import { MACHINE_ERROR_WORDS, machineErrorKind } from '../../machine-error.js';
import { ApiError } from './errors.js';

/**
 * A write the machine could not make (the data folder's disk full or over quota, read-only, an
 * I/O error: src/machine-error.ts) as the answer every route gives for it: 503 `storage_full` with
 * Retry-After, never 500. Nothing was stored, so the same request succeeds once there is room
 * (docs/decisions.md, "A full disk"). Null for any other error.
 */
export function storageFull(error: unknown, retryAfterSeconds: number): ApiError | null {
  const kind = machineErrorKind(error);
  if (kind === null) return null;
  return new ApiError(
    'storage_full',
    `the service cannot store anything now (${MACHINE_ERROR_WORDS[kind]}); nothing was stored or changed, retry after the time in Retry-After`,
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
