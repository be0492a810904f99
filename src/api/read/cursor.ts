import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalid } from '../http/errors.js';

/** Where the previous page stopped: the last trip's start (µs since epoch) and id. */
export interface CursorPosition {
  startedUs: string;
  tripId: string;
}

/**
 * Opaque keyset cursors, signed with the server's key and bound to the query's filters, so a
 * forged cursor or one from another query is a 400 rather than a wrong page.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(position: CursorPosition, filters: string): string {
    const body = Buffer.from(JSON.stringify([position.startedUs, position.tripId, filters])).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The position of a cursor this service issued, byte for byte: anything changed, added or cut is a 400. */
  decode(cursor: string, filters: string): CursorPosition {
    const parts = cursor.split('.');
    const [body, signature] = parts;
    if (parts.length !== 2 || !body || !signature) throw invalid('nextCursor', 'is not a cursor this service issued');
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      throw invalid('nextCursor', 'is not a cursor this service issued');
    const [startedUs, tripId, boundTo] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [
      string,
      string,
      string,
    ];
    if (boundTo !== filters) throw invalid('nextCursor', 'belongs to a query with other filters');
    return { startedUs, tripId };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
