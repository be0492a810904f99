import type { Row } from '../db/sql.js';
import type { OperatorRequest } from '../webhooks/operations.js';

/** The operator CLI's human output (--json prints the result as it is). */
export function formatWebhooks(request: OperatorRequest, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (request.op) {
    case 'list': {
      const events = r['events'] as Row[];
      const lines = events.map((e) => {
        const when = e['status'] === 'pending' ? `next ${e['next_attempt_at'] ?? '-'}` : e['status'] === 'delivered' ? `delivered ${e['delivered_at']}` : `dead ${e['dead_at']}${e['queued_kind'] === 'replay' ? ' (replay queued)' : ''}`;
        return `  ${e['event_id']}  ${e['app_id']}  ${e['event_type']}  ${e['status']}  attempts=${e['attempt_count']}  ${when}${e['last_error'] ? `  last: ${e['last_error']}` : ''}`;
      });
      return `${events.length} event(s)${lines.length ? `\n${lines.join('\n')}` : ''}`;
    }
    case 'show': {
      const e = r['event'] as Row;
      const attempts = (r['attempts'] as Row[]).map((a) =>
        `  #${a['attempt']} ${a['kind']}  ${a['started_at']}  ${a['duration_ms']} ms  ${a['status_code'] ?? '-'}  ${a['error'] ?? 'ok'}  ${a['url']}`);
      return (
        `${e['event_id']} (${e['event_type']}, app ${e['app_id']}): ${e['status']}, ${e['attempt_count']} attempt(s), created ${e['created_at']}` +
        `${e['next_attempt_at'] ? `, next attempt ${e['next_attempt_at']} (${e['queued_kind']})` : ''}\n` +
        `  body: ${JSON.stringify(e['body'])}\n${attempts.length ? attempts.join('\n') : '  no attempt yet'}`
      );
    }
    case 'replay': {
      const queued = r['queued'] as string[];
      return `${queued.length} event(s) queued for one more attempt${queued.length ? `: ${queued.slice(0, 20).join(', ')}${queued.length > 20 ? ', …' : ''}` : ''}`;
    }
    case 'counts': {
      const counts = r['counts'] as Row[];
      const live = r['deliverer'] as { inFlight: number; openEndpoints: { endpoint: string; openedAt: string }[] } | null;
      const lines = counts.map((c) => `  ${c['app_id']}  ${c['status']}: ${c['events']}${c['status'] === 'pending' ? ` (${c['due_now']} due now, next ${c['next_attempt_at'] ?? '-'})` : ''}${Number(c['replays_queued']) > 0 ? `, ${c['replays_queued']} replay(s) queued` : ''}`);
      const state = live ? `\n  deliverer running: ${live.inFlight} attempt(s) in flight; open breakers: ${live.openEndpoints.map((o) => `${o.endpoint} since ${o.openedAt}`).join(', ') || 'none'}` : '\n  deliverer not running';
      return `${counts.length} app/status row(s)${lines.length ? `\n${lines.join('\n')}` : ''}${state}`;
    }
  }
}
