import type { SnapshotFollower, Snapshot } from '../read/snapshot.js';

/**
 * Holds the current snapshot beyond one call, for a response streamed after the handler
 * returned (the bulk export): the snapshot stays open until `release`, so every batch reads the
 * same publish. Null before the first publish.
 */
export function holdSnapshot(snapshots: SnapshotFollower): Promise<{ snapshot: Snapshot; release: () => void } | null> {
  return new Promise((resolve, reject) => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((done) => {
      release = done;
    });
    snapshots
      .use(async (snapshot) => {
        resolve({ snapshot, release });
        await held;
      })
      .then((used) => {
        if (used === null) resolve(null);
      }, reject);
  });
}
