import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The interface's signature: lowercase hex of HMAC-SHA256(raw body bytes, AppSecret as UTF-8),
 * sent as `Authorization: HMAC-SHA256 <signature>`.
 *
 * @example authorizationHeader('{"id":"evt_1"}', 'ds_secret') // 'HMAC-SHA256 5f0c…'
 */
export function authorizationHeader(rawBody: string | Buffer, appSecret: string): string {
  return `HMAC-SHA256 ${hmacHex(rawBody, appSecret)}`;
}

function hmacHex(rawBody: string | Buffer, appSecret: string): string {
  return createHmac('sha256', Buffer.from(appSecret, 'utf8')).update(rawBody).digest('hex');
}

/**
 * For receivers: true when `authorization` (the header's value) signs `rawBody` with `appSecret`.
 * Pass the raw bytes as received, before any JSON parsing. Compared in constant time.
 *
 * @example if (!verifyWebhook(rawBody, req.headers.authorization, process.env.APP_SECRET)) return 401;
 */
export function verifyWebhook(rawBody: string | Buffer, authorization: string | undefined, appSecret: string): boolean {
  const match = /^HMAC-SHA256 ([0-9a-f]{64})$/.exec(authorization ?? '');
  if (!match) return false;
  const expected = Buffer.from(hmacHex(rawBody, appSecret), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[1] as string, 'hex'));
}

/**
 * The Standard Webhooks secret for an AppSecret: `whsec_` + base64 of its UTF-8 bytes, so the
 * signing key is the same bytes as for the interface's header. Receivers using a Standard Webhooks
 * library configure this value.
 */
export function standardWebhooksSecret(appSecret: string): string {
  return `whsec_${Buffer.from(appSecret, 'utf8').toString('base64')}`;
}

/**
 * Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) beside the required
 * ones, for receivers that want replay protection (the timestamp is signed). With two secrets
 * (during a rotation's grace period) the signature header carries both, space-separated.
 */
export function standardWebhooksHeaders(id: string, timestampSeconds: number, rawBody: string, appSecrets: string[]): Record<string, string> {
  const signed = `${id}.${timestampSeconds}.${rawBody}`;
  const signatures = appSecrets.map((secret) => `v1,${createHmac('sha256', Buffer.from(secret, 'utf8')).update(signed).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
