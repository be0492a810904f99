import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ApiError, invalid } from './errors.js';

/** A body stream as Fastify reads it after `preParsing`: the bytes that came over the wire, for its Content-Length check. */
type Decoded = Transform & { receivedEncodedLength: number };

/**
 * The SDK upload's body as its JSON parser reads it (docs/decisions.md, API): gzip is inflated,
 * and `limit` applies to the inflated bytes, refused (413) as soon as they pass it, so a small body
 * that inflates to gigabytes is never held. Any other Content-Encoding, a charset other than
 * UTF-8, or a UTF-16 byte order mark is a 415 naming it; a gzip label on bytes that are not gzip
 * is a 400 naming the encoding error.
 * @example uploadBody(request.headers, payload, 8 * 1024 * 1024)
 */
export function uploadBody(headers: IncomingHttpHeaders, payload: Readable, limit: number): Readable {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError('unsupported_media_type', `Content-Type: charset '${charset}' is not supported; send UTF-8`);
  }
  const label = (headers['content-encoding'] ?? '').trim();
  const codings = label
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  const gzip = codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip');
  if (codings.length > 0 && !gzip) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Encoding: '${label}' is not supported; send gzip or no encoding`,
    );
  }

  let inflated = 0;
  let head = Buffer.alloc(0);
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inflated += chunk.length;
      if (inflated > limit) {
        callback(
          new ApiError(
            'payload_too_large',
            `body: larger than the ${limit} bytes this operation takes${gzip ? ' once inflated' : ''}`,
          ),
        );
        return;
      }
      if (head.length < 2) {
        head = Buffer.concat([head, chunk.subarray(0, 2)]).subarray(0, 2);
        if (head.length === 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
          callback(
            new ApiError('unsupported_media_type', 'body: UTF-16 (a byte order mark) is not supported; send UTF-8'),
          );
          return;
        }
      }
      callback(null, chunk);
    },
  }) as Decoded;
  out.receivedEncodedLength = 0;
  const count = (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  };
  payload.on('data', count);
  payload.on('error', (error) => out.destroy(error));
  if (!gzip) {
    payload.pipe(out);
    out.once('close', () => stop(payload, out, count));
    return out;
  }
  const gunzip = createGunzip();
  gunzip.on('error', (error) => out.destroy(invalid('body', `Content-Encoding gzip: ${error.message}`)));
  payload.pipe(gunzip).pipe(out);
  // once refused, nothing more is inflated: the rest of the body is left unread (the answer closes the connection)
  out.once('close', () => {
    stop(payload, gunzip, count);
    gunzip.destroy();
  });
  return out;
}

function stop(payload: Readable, into: NodeJS.WritableStream, count: (chunk: Buffer) => void): void {
  payload.removeListener('data', count);
  payload.unpipe(into);
  payload.pause();
}
