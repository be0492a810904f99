import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/** Below this share of its size free, a disk is nearly full (/readyz, and the alert in deploy/prometheus/alerts.yml). */
export const NEARLY_FULL_FREE_RATIO = 0.05;

export interface DiskSpace {
  /** Bytes this process may still write (statfs's blocks available to an unprivileged user). */
  freeBytes: number;
  sizeBytes: number;
  /** `ok`; `nearly_full` under 5% free; `full` when less is free than `fullBelowBytes`. */
  state: 'ok' | 'nearly_full' | 'full';
}

/**
 * The free space of the disk holding `folder` (or, while it does not exist yet, its parent's), by
 * statfs: a few microseconds, so read afresh each time it is asked for. Null when it cannot be
 * read. `fullBelowBytes`: what one write the service must be able to make needs (the largest SDK
 * upload).
 */
export function diskSpace(folder: string, fullBelowBytes: number): DiskSpace | null {
  try {
    const st = statfsSync(existsSync(folder) ? folder : dirname(folder));
    const freeBytes = st.bavail * st.bsize;
    const sizeBytes = st.blocks * st.bsize;
    const state =
      freeBytes < fullBelowBytes ? 'full' : freeBytes < sizeBytes * NEARLY_FULL_FREE_RATIO ? 'nearly_full' : 'ok';
    return { freeBytes, sizeBytes, state };
  } catch {
    return null;
  }
}
