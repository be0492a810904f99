import type { Row } from '../db/sql.js';
import type { OperatorRequest } from '../webhooks/operations.js';

/** The operator CLI's human output (--json prints the result as it is). */
export function formatWebhooks(request: OperatorRequest, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (request.op) {
    case 'list': {
      const events = r['events'] as Row[];
      const lines = events.map((e) => {
        const when =
          e['status'] === 'pending'
            ? `next ${e['next_attempt_at'] ?? '-'}`
            : e['status'] === 'delivered'
              ? `delivered ${e['delivered_at']}`
              : e['status'] === 'filtered'
                ? 'not sent: the endpoint does not take this type'
                : `dead ${e['dead_at']}${e['queued_kind'] === 'replay' ? ' (replay queued)' : ''}`;
        return `  ${e['event_id']}  ${e['app_id']}  ${e['event_type']}  ${e['status']}  attempts=${e['attempt_count']}  ${when}${e['last_error'] ? `  last: ${e['last_error']}` : ''}`;
      });
      return `${events.length} event(s)${lines.length ? `\n${lines.join('\n')}` : ''}`;
    }
    case 'show': {
      const e = r['event'] as Row;
      const attempts = (r['attempts'] as Row[]).map(
        (a) =>
          `  #${a['attempt']} ${a['kind']}  ${a['started_at']}  ${a['duration_ms']} ms  ${a['status_code'] ?? '-'}  ${a['error'] ?? 'ok'}  ${a['url']}`,
      );
      return (
        `${e['event_id']} (${e['event_type']}, app ${e['app_id']}): ${e['status']}, ${e['attempt_count']} attempt(s), created ${e['created_at']}` +
        `${e['next_attempt_at'] ? `, next attempt ${e['next_attempt_at']} (${e['queued_kind']})` : ''}\n` +
        `  body: ${JSON.stringify(e['body'])}\n${attempts.length ? attempts.join('\n') : '  no attempt yet'}`
      );
    }
    case 'copy':
      return `outbox copied to ${String(r['copied'])}`;
    case 'backlog':
      return `${String(r['backlog'])} event(s) waiting to be sent`;
    case 'replay':
    case 'recover': {
      const queued = r['queued'] as string[];
      return `${queued.length} event(s) queued for one more attempt${queued.length ? `: ${queued.slice(0, 20).join(', ')}${queued.length > 20 ? ', …' : ''}` : ''}`;
    }
    case 'counts': {
      const counts = r['counts'] as Row[];
      const live = r['deliverer'] as {
        inFlight: number;
        openEndpoints: { endpoint: string; openedAt: string }[];
      } | null;
      const waiting = r['waiting'] as { files: number; events: number; byApp: Record<string, number> } | undefined;
      const apps = (r['apps'] as { appId: string; webhookUrl: string | null }[] | undefined) ?? [];
      const noUrl = new Set(apps.filter((a) => !a.webhookUrl).map((a) => a.appId));
      const pending = (c: Row): string =>
        noUrl.has(String(c['app_id']))
          ? ' (no URL set: they wait until one is set with apps.js set-webhook)'
          : ` (${c['due_now']} due now, next ${c['next_attempt_at'] ?? '-'})`;
      const lines = counts.map(
        (c) =>
          `  ${c['app_id']}  ${c['status']}: ${c['events']}${c['status'] === 'pending' ? pending(c) : ''}${Number(c['replays_queued']) > 0 ? `, ${c['replays_queued']} replay(s) queued` : ''}`,
      );
      if (waiting && waiting.events > 0) {
        const perApp = Object.entries(waiting.byApp)
          .map(([app, n]) => `${app} ${n}${noUrl.has(app) ? ' (no URL set)' : ''}`)
          .join(', ');
        lines.push(
          `  waiting in ${waiting.files} event file(s), not yet taken in by the deliverer: ${waiting.events} event(s) (${perApp})`,
        );
      }
      for (const app of apps)
        if (noUrl.has(app.appId) && !counts.some((c) => c['app_id'] === app.appId) && !waiting?.byApp[app.appId])
          lines.push(`  ${app.appId}  no URL set`);
      const state = live
        ? `\n  deliverer running: ${live.inFlight} attempt(s) in flight; open breakers: ${live.openEndpoints.map((o) => `${o.endpoint} since ${o.openedAt}`).join(', ') || 'none'}`
        : '\n  deliverer not running';
      const total = counts.reduce((a, c) => a + Number(c['events']), 0);
      return `${total} event(s) in the outbox (${counts.length} app/status row(s))${waiting ? `, ${waiting.events} waiting in event files` : ''}${lines.length ? `\n${lines.join('\n')}` : ''}${state}`;
    }
  }
}
