// The deliver summary groups failed attempts by reason: what varies between attempts of one cause
// (a receiver's text, a port, a timeout's figure) must not split the count.
import { describe, expect, it } from 'vitest';
import { failureReason } from '../../src/webhooks/deliverer.js';
import { describeCounters } from '../../src/jobs/deliver.js';

describe('failure reasons', () => {
  it('keep a status, an error code or a refusal, without the details that vary', () => {
    expect(failureReason('HTTP 503: upstream down', 503)).toBe('HTTP 503');
    expect(failureReason('HTTP 302: redirect to https://x/y not followed', 302)).toBe('HTTP 302');
    expect(failureReason('HTTP 500, then ECONNRESET: socket hang up', 500)).toBe('HTTP 500');
    expect(failureReason('timeout: no complete answer within 10000 ms', null)).toBe('timeout');
    expect(failureReason('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', null)).toBe('ECONNREFUSED');
    expect(failureReason('circuit_open: the endpoint left the last attempts unanswered; not sent', null)).toBe(
      'circuit_open',
    );
    expect(failureReason('blocked: 10.0.0.1 is a private or reserved address', null)).toBe(
      'blocked: 10.0.0.1 is a private or reserved address',
    );
    expect(failureReason(null, 418)).toBe('HTTP 418');
  });

  it('are listed in the summary, most frequent first, five at most', () => {
    const counters = {
      intake: { files: 1, events: 9, known: 0, rejected: 0, failedFiles: 0 },
      attempts: 9,
      delivered: 1,
      retried: 8,
      dead: 0,
      replayed: 0,
      replayFailed: 0,
      shortCircuited: 0,
      failures: { timeout: 1, 'HTTP 503': 3, ECONNREFUSED: 1, 'HTTP 500': 1, 'HTTP 404': 1, 'HTTP 410': 1 },
    };
    expect(describeCounters(counters)).toBe(
      '9 event(s) taken in from 1 file(s); 9 attempt(s): 1 delivered, 8 to retry, 0 dead-lettered; failed: 3 HTTP 503; 1 ECONNREFUSED; 1 HTTP 404; 1 HTTP 410; 1 HTTP 500; 1 other reason(s)',
    );
  });
});
