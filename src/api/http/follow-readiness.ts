import type { FollowStatus } from '../../follow/status.js';

/** An API machine's follower as the API processes see it (src/follow/status.ts). */
export interface FollowView {
  /** The job machine's data folder as rsync names it. */
  source: string;
  /** The follower's last written status (null: it has not checked yet). */
  status(): FollowStatus | null;
}

/**
 * What /readyz says of an API machine's follower, beside the snapshot it serves: coarse states
 * only, as for the rest of /readyz (unauthenticated); the source, the bytes copied and the copy's
 * error are in the log, `follow/status.json` and `/metrics`.
 */
export interface FollowReadiness {
  /** Seconds since this machine's copy was last the job machine's newest publish (null: never). */
  lagSeconds: number | null;
  /** The source's newest version as last read, minus the one copied here. */
  versionsBehind: number | null;
  lastCopy: { at: string; version: number } | null;
  /** Whether the last check or copy of the source failed (the last snapshot copied stays served). */
  failing: boolean;
}

export function followReadiness(view: FollowView, servedVersion: number | null, now: Date): FollowReadiness {
  const s = view.status();
  const inSync = s?.inSyncAt ? Date.parse(s.inSyncAt) : Number.NaN;
  return {
    lagSeconds: Number.isFinite(inSync) ? Math.max(0, Math.round((now.getTime() - inSync) / 1000)) : null,
    versionsBehind:
      s?.sourceVersion != null && servedVersion !== null ? Math.max(0, s.sourceVersion - servedVersion) : null,
    lastCopy: s?.lastCopy ? { at: s.lastCopy.at, version: s.lastCopy.version } : null,
    failing: Boolean(s?.lastError),
  };
}

/** Why an API machine serves nothing yet: no copy made, or made and failed (its error is logged, not shown here). */
export function notFollowedYet(view: FollowView): string {
  const failed = Boolean(view.status()?.lastError);
  return `following the job machine: no snapshot copied yet${failed ? '; the last copy failed (see the log and follow/status.json)' : ''}`;
}
