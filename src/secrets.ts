import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random secret with `bytes` of entropy (default 32 bytes = 256 bits). */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** SHA-256 hex: secrets and tokens are stored only in this form when they need not be recovered. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Compares two hex hashes in constant time. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
