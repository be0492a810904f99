import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// @duckdb/node-api frees a result's chunks only when their JS wrappers are garbage-collected, and
// V8 does not see that native memory: streaming gigabytes of rows through a few long-lived old-space
// wrappers filled DuckDB's 3 GB limit before any collection ran (measured in the serving pack build).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage now, so DuckDB gets back the memory of results already read. */
export function releaseReadResults(): void {
  gc();
}
