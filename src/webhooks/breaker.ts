interface EndpointState {
  unanswered: number;
  openedAt: number | null;
  /** Settles when the probe in flight has its answer. */
  probe: Promise<void> | null;
  probeDone: () => void;
}

/**
 * A circuit breaker per endpoint. After `threshold` attempts in a row got no answer at all
 * (timeouts, refused or reset connections) the endpoint is open: its due attempts fail at once
 * (recorded as failed attempts, so each event still follows its retry schedule) instead of each
 * holding a connection for the full timeout. One real probe goes out per `cooldownMs`; any answer
 * closes the breaker again; attempts that come while the probe is out wait for its answer. An
 * endpoint that answers, even with a 5xx, never opens it.
 */
export class Breaker {
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
  ) {}

  /**
   * 'send' (closed), 'probe' (open, the one attempt allowed now), 'reject' (open), or a promise
   * to wait on (a probe is out) before asking again.
   */
  admit(endpoint: string, now: number): 'send' | 'probe' | 'reject' | Promise<void> {
    const state = this.endpoints.get(endpoint);
    if (!state || state.openedAt === null) return 'send';
    if (state.probe !== null) return state.probe;
    if (now - state.openedAt < this.cooldownMs) return 'reject';
    state.probe = new Promise((resolve) => {
      state.probeDone = resolve;
    });
    return 'probe';
  }

  /** Feeds an attempt's result back; `probe` says whether it was the admitted probe. */
  record(endpoint: string, answered: boolean, now: number, probe: boolean): void {
    const state = this.endpoints.get(endpoint) ?? {
      unanswered: 0,
      openedAt: null,
      probe: null,
      probeDone: () => undefined,
    };
    if (answered) {
      // closed: whoever waits for a probe's answer goes ahead now
      this.endpoints.delete(endpoint);
      state.probe = null;
      state.probeDone();
      return;
    }
    state.unanswered++;
    if (state.unanswered >= this.threshold && (state.openedAt === null || probe)) state.openedAt = now;
    this.endpoints.set(endpoint, state);
    if (probe) {
      state.probe = null;
      state.probeDone();
    }
  }

  /** The probe was not sent after all (the deliverer is stopping): let the next attempt probe. */
  abandonProbe(endpoint: string): void {
    const state = this.endpoints.get(endpoint);
    if (!state?.probe) return;
    state.probe = null;
    state.probeDone();
  }

  /** Open endpoints and since when, for the operator. */
  open(): { endpoint: string; openedAt: number; unanswered: number }[] {
    return [...this.endpoints]
      .filter(([, s]) => s.openedAt !== null)
      .map(([endpoint, s]) => ({ endpoint, openedAt: s.openedAt as number, unanswered: s.unanswered }));
  }
}
