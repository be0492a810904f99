import type { SnapshotFollower } from './snapshot.js';

/** What one cell's snapshots are served from on this machine (docs/operating.md, Cells). */
export interface CellServing {
  snapshots: SnapshotFollower;
  /** The cell's route files. */
  routesDir: string;
}

/**
 * The cells this API process serves: every cell it follows (serve.js --follow NAME=SOURCE, each in
 * `<data-dir>/cells/NAME/`), or the job machine's own (serve.js --cell NAME). A request is answered
 * from its driver's cell, so every driver of these cells is answered as one warehouse would.
 */
export interface CellsServed {
  /** The cells and their snapshots; the job machine's own cell serves its data folder's publish. */
  byName: Map<string, CellServing>;
  /** A driver without a cell (none given yet: it has no data anywhere) is answered from this one. */
  fallback: CellServing;
}
