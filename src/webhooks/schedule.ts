/** What becomes of an event after one attempt. */
export type Outcome =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; nextAt: Date }
  | { outcome: 'dead' }
  | { outcome: 'replay_failed' };

export interface AttemptFacts {
  kind: 'scheduled' | 'replay';
  delivered: boolean;
  /** Scheduled attempts made before this one (0 for the first). */
  scheduledBefore: number;
  /** When the attempt failed: the next one is counted from here ("after the previous failure"). */
  finishedAt: Date;
  /** A receiver's Retry-After (429, 503), in milliseconds. */
  retryAfterMs?: number;
}

/**
 * The interface's retry rule: after the n-th failed scheduled attempt wait `scheduleMs[n-1]`, and
 * dead-letter the event when the schedule is used up (1 attempt + 6 retries by default). A replay
 * is one attempt and never rescheduled. A Retry-After longer than the step is honoured, up to the
 * schedule's longest step; a shorter one never brings an attempt forward.
 *
 * @example outcomeOf({ kind: 'scheduled', delivered: false, scheduledBefore: 0, finishedAt }, [60_000]) // retry at +1 min
 */
export function outcomeOf(facts: AttemptFacts, scheduleMs: number[]): Outcome {
  if (facts.delivered) return { outcome: 'delivered' };
  if (facts.kind === 'replay') return { outcome: 'replay_failed' };
  const wait = scheduleMs[facts.scheduledBefore];
  if (wait === undefined) return { outcome: 'dead' };
  const longest = Math.max(...scheduleMs);
  const honoured = Math.min(Math.max(wait, facts.retryAfterMs ?? 0), Math.max(wait, longest));
  return { outcome: 'retry', nextAt: new Date(facts.finishedAt.getTime() + honoured) };
}
