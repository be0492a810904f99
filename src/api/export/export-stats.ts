/**
 * Counters of this process's bulk exports, read by tests and a long run's probes: how many batches
 * of trips the exports read from DuckDB, and how many exports hold a snapshot now. They show
 * backpressure from the outside: while a client does not read, the batches read stop growing
 * (the stream is pulled, not pushed), and a client that goes away lets its snapshot go.
 */
export const exportStats = {
  /** Batches of trips read from DuckDB since the process started, all exports together. */
  batchesRead: 0,
  /** Exports holding a snapshot (from their first read until their response ends, fails or is dropped). */
  holding: 0,
};
