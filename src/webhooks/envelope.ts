import { randomBytes } from 'node:crypto';

/**
 * The envelope's version (docs/decisions.md, Webhooks (delivery)): a date. A new field keeps the version; a change of
 * meaning of an existing one gets a new date.
 */
export const ENVELOPE_VERSION = '2026-11-28';

/**
 * The body of a `webhook.test` event: the same envelope as every event, with data that says
 * what it is. Its id is new every time; it is never stored in the outbox.
 */
export function testEventBody(appId: string, now: Date): { id: string; body: string } {
  const id = `evt_test_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({
    id,
    type: 'webhook.test',
    version: ENVELOPE_VERSION,
    createdAt: now.toISOString(),
    appId,
    data: { message: 'a test event sent on request; nothing changed' },
  });
  return { id, body };
}
