import { STATUS_CODES } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { ERRORS, type ErrorName } from './errors.js';

/** What Node's HTTP parser refused, as an ErrorResult. */
export function refusal(error: NodeJS.ErrnoException): { name: ErrorName; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return { name: 'headers_too_large', message: 'headers: request line and headers too large' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { name: 'request_timeout', message: 'request: not received in time' };
  return { name: 'malformed_request', message: `request: malformed HTTP (${error.code ?? 'parse error'})` };
}

/**
 * The http server's `clientError` handler: a request Node's parser refuses (a NUL byte, a bad
 * header, headers too large, too slow) never reaches Fastify, so it is answered here, in the
 * ErrorResult shape like every other error, and the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // nothing to answer on a connection that is gone, or whose response has begun
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  const { name, message } = refusal(error);
  const { status, code } = ERRORS[name];
  const requestId = randomUUID();
  const body = JSON.stringify({ code, error: name, message, requestId });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
