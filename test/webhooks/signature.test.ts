import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  authorizationHeader,
  standardWebhooksHeaders,
  standardWebhooksSecret,
  verifyWebhook,
} from '../../src/webhooks/signature.js';

const body =
  '{"id":"evt_1","type":"trip.created","createdAt":"2026-11-21T12:00:00.000Z","appId":"app_1","data":{"tripId":"t-1","note":"ümlaut"}}';
const secret = 'ds_Zm9vYmFyYmF6';

describe('webhook signatures', () => {
  it('signs the raw body as the interface says (checked by a second implementation)', () => {
    const independent = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(body, 'utf8'))
      .digest('hex');
    expect(authorizationHeader(body, secret)).toBe(`HMAC-SHA256 ${independent}`);
    expect(independent).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies a good signature and refuses a changed body, another secret or a malformed header', () => {
    const header = authorizationHeader(body, secret);
    expect(verifyWebhook(body, header, secret)).toBe(true);
    expect(verifyWebhook(Buffer.from(body, 'utf8'), header, secret)).toBe(true);
    expect(verifyWebhook(body.replace('t-1', 't-2'), header, secret)).toBe(false);
    expect(verifyWebhook(body, header, 'ds_other')).toBe(false);
    expect(verifyWebhook(body, header.toUpperCase(), secret)).toBe(false);
    expect(verifyWebhook(body, undefined, secret)).toBe(false);
    expect(verifyWebhook(body, 'HMAC-SHA256 abc', secret)).toBe(false);
  });

  it('adds Standard Webhooks headers that the standardwebhooks package accepts, for either secret of a rotation', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = standardWebhooksHeaders('evt_1', now, body, [secret, 'ds_new_secret']);
    expect(new Webhook(standardWebhooksSecret(secret)).verify(body, headers)).toMatchObject({ id: 'evt_1' });
    expect(new Webhook(standardWebhooksSecret('ds_new_secret')).verify(body, headers)).toMatchObject({ id: 'evt_1' });
    expect(() => new Webhook(standardWebhooksSecret('ds_unrelated')).verify(body, headers)).toThrow();
    // replay protection: a timestamp outside the tolerance is refused
    const old = standardWebhooksHeaders('evt_1', now - 600, body, [secret]);
    expect(() => new Webhook(standardWebhooksSecret(secret)).verify(body, old)).toThrow();
  });
});
