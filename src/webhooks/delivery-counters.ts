import type { IntakeResult } from './intake.js';

export interface DeliveryCounters {
  intake: IntakeResult;
  attempts: number;
  delivered: number;
  retried: number;
  dead: number;
  replayed: number;
  replayFailed: number;
  /** Attempts failed at once because the endpoint's breaker was open. */
  shortCircuited: number;
  /** Events not sent because the endpoint does not take their type. */
  filtered: number;
  /** Failed attempts (retried, dead-lettered or replays failed) by reason, so a summary says why. */
  failures: Record<string, number>;
}

/**
 * A failed attempt's reason without what varies between attempts (a URL's path, a port, a
 * receiver's text): `HTTP 503`, `timeout`, `ECONNREFUSED`, `circuit_open`, or a refusal whole
 * (`blocked: ...` names the rule and is the same for every event of an endpoint).
 */
export function failureReason(error: string | null, statusCode: number | null): string {
  if (error === null) return statusCode === null ? 'no answer' : `HTTP ${statusCode}`;
  if (error.startsWith('blocked:')) return error.slice(0, 160);
  if (/^HTTP \d+/.test(error)) return (/^HTTP \d+/.exec(error) as RegExpExecArray)[0];
  const head = /^[A-Za-z_]+/.exec(error);
  return head ? head[0] : error.slice(0, 60);
}

export function emptyCounters(): DeliveryCounters {
  return {
    intake: { files: 0, events: 0, known: 0, rejected: 0, failedFiles: 0 },
    attempts: 0,
    delivered: 0,
    retried: 0,
    dead: 0,
    replayed: 0,
    replayFailed: 0,
    shortCircuited: 0,
    filtered: 0,
    failures: {},
  };
}

export function addIntake(total: IntakeResult, more: IntakeResult): void {
  total.files += more.files;
  total.events += more.events;
  total.known += more.known;
  total.rejected += more.rejected;
  total.failedFiles += more.failedFiles;
}
