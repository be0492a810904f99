import { RouteFileDamagedError } from '../../route/route-file.js';
import { ApiError } from '../http/errors.js';
import { isCorruptDatabase } from './damaged-files.js';
import type { Snapshot } from './snapshot.js';

/**
 * A read that met a damaged published file (docs/decisions.md, API): a route file that is cut short or
 * fails its CRC-32, or a slot block DuckDB refuses. The file is named in the log and on /readyz
 * and reported for the next publish to rebuild (src/api/read/damaged-files.ts); the request gets 503
 * `data_unavailable`, never a 500, and never the damaged bytes. Any other error passes unchanged.
 */
export function asUnavailable(s: Snapshot, error: unknown): unknown {
  if (error instanceof RouteFileDamagedError) {
    s.damaged?.report(error.file, error.message.slice(error.message.indexOf(': ') + 2));
    return unavailable();
  }
  if (isCorruptDatabase(error)) {
    s.damaged?.report(
      s.manifest.file,
      (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'corrupt',
    );
    return unavailable();
  }
  return error;
}

export const unavailable = (): ApiError =>
  new ApiError('data_unavailable', 'a file this request needs is damaged; it is rebuilt by the next load: retry later');
