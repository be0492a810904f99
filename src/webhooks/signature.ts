import { createHmac, timingSafeEqual } from 'node:crypto';
import { previousSecretsOf, type PreviousSecret } from '../apps/previous-secrets.js';

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
 * For receivers: true when `authorization` (the header's value) signs `rawBody` with the AppSecret,
 * or with any of the given secrets (during a rotation, pass `[newSecret, oldSecret]`). Pass the
 * raw bytes as received, before any JSON parsing. Compared in constant time.
 *
 * @example if (!verifyWebhook(rawBody, req.headers.authorization, process.env.APP_SECRET)) return 401;
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  authorization: string | undefined,
  appSecret: string | string[],
): boolean {
  const match = /^HMAC-SHA256 ([0-9a-f]{64})$/.exec(authorization ?? '');
  if (!match) return false;
  const received = Buffer.from(match[1] as string, 'hex');
  let valid = false;
  // every secret is checked, so the time taken does not tell which one matched
  for (const secret of [appSecret].flat())
    valid = timingSafeEqual(Buffer.from(hmacHex(rawBody, secret), 'hex'), received) || valid;
  return valid;
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
export function standardWebhooksHeaders(
  id: string,
  timestampSeconds: number,
  rawBody: string,
  appSecrets: string[],
): Record<string, string> {
  const signed = `${id}.${timestampSeconds}.${rawBody}`;
  const signatures = appSecrets.map(
    (secret) => `v1,${createHmac('sha256', Buffer.from(secret, 'utf8')).update(signed).digest('base64')}`,
  );
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

/** An app's secrets as the deliverer signs with them. */
export interface SigningSecrets {
  /** Signs the interface's `Authorization` header. */
  authorization: string;
  /** Sign `webhook-signature`: the current secret, then every previous one within its grace period. */
  standard: string[];
}

/**
 * During a rotation's grace period the `Authorization` header stays signed with the previous
 * secret, so a receiver that has not switched yet keeps verifying; `webhook-signature` carries
 * every secret still within its grace period. After several rotations `Authorization` uses the
 * oldest secret still within its grace period: a receiver that missed the rotations holds that one
 * (docs/decisions.md, Webhooks (delivery)). When every grace period has ended, everything is signed
 * with the current secret only.
 */
export function signingSecrets(
  app: { appSecret: string; previousSecrets?: PreviousSecret[]; previousSecret?: PreviousSecret | null },
  now: Date,
): SigningSecrets {
  const valid = previousSecretsOf(app)
    .filter((p) => Date.parse(p.validUntil) > now.getTime())
    .map((p) => p.secret);
  const oldest = valid[valid.length - 1];
  return { authorization: oldest ?? app.appSecret, standard: [app.appSecret, ...valid] };
}

/**
 * Every header of one delivery attempt (docs/decisions.md, Webhooks (delivery) and the interface), Content-Length aside,
 * which the sender sets from the bytes it sends.
 */
export function deliveryHeaders(
  event: { id: string; type: string },
  rawBody: string,
  attempt: number,
  secrets: SigningSecrets,
  now: Date,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Authorization: authorizationHeader(rawBody, secrets.authorization),
    'X-Event-Id': event.id,
    'X-Event-Type': event.type,
    'X-Delivery-Attempt': String(attempt),
    'User-Agent': 'driving-data-service-webhooks/1',
    ...standardWebhooksHeaders(event.id, Math.floor(now.getTime() / 1000), rawBody, secrets.standard),
  };
}
