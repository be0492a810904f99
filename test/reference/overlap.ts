// Independent reference of plausibility rule 5 (overlapping_trip, docs/decisions.md "Trip records"): plain loops over one account's
// stored trips in arrival order. Trips abnormal for another reason neither take part nor block.
export const OVERLAP_TOLERANCE_MS = 60_000;

export interface OverlapTrip {
  tripId: string;
  accountKey: string; // app and user
  startMs: number;
  endMs: number;
  /** The reason from every other rule ('' when none applies). */
  abnormalReason: string;
}

/** Seconds [a1, a2) and [b1, b2) share, in ms (0 when apart). */
export function sharedMs(a1: number, a2: number, b1: number, b2: number): number {
  return Math.max(0, Math.min(a2, b2) - Math.max(a1, b1));
}

/**
 * The final reason of every trip, keyed by tripId. `arrived` lists the stored trips in arrival
 * order (a replaced trip in its first arrival position, with its current values).
 */
export function referenceOverlaps(arrived: OverlapTrip[]): Map<string, string> {
  const reasons = new Map<string, string>();
  const kept: OverlapTrip[] = [];
  for (const trip of arrived) {
    if (trip.abnormalReason !== '') {
      reasons.set(trip.tripId, trip.abnormalReason);
      continue;
    }
    const clash = kept.some(
      (k) =>
        k.accountKey === trip.accountKey &&
        sharedMs(k.startMs, k.endMs, trip.startMs, trip.endMs) > OVERLAP_TOLERANCE_MS,
    );
    if (clash) reasons.set(trip.tripId, 'overlapping_trip');
    else {
      reasons.set(trip.tripId, '');
      kept.push(trip);
    }
  }
  return reasons;
}

/**
 * Trips of one file (or of files in order), as referenceTrip gives them, with rule 5 applied: they
 * arrive in the order given, and a tripId given twice keeps its last record (the load keeps the
 * last line of a tripId in a file), arriving where that record is.
 */
export function applyOverlaps<
  T extends {
    tripId: string;
    appId: string;
    platformUserId: number;
    startMs: number;
    endMs: number;
    abnormalReason: string;
    status: string;
  },
>(trips: T[]): T[] {
  const last = new Map<string, T>();
  for (const t of trips) {
    last.delete(t.tripId);
    last.set(t.tripId, t);
  }
  const arrived = [...last.values()];
  const reasons = referenceOverlaps(arrived.map((t) => ({ ...t, accountKey: `${t.appId}/${t.platformUserId}` })));
  return arrived.map((t) => {
    const reason = reasons.get(t.tripId) ?? t.abnormalReason;
    return { ...t, abnormalReason: reason, status: reason === '' ? 'normal' : 'abnormal' };
  });
}
