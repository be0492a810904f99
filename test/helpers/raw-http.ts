import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A loopback socket to `port`, connected. */
export async function openSocket(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/**
 * Reads one HTTP response from `socket` (headers and a Content-Length body), or rejects when the
 * socket closes first or nothing complete came within `waitMs`. The wait only bounds a test that
 * would otherwise hang; it asserts nothing about speed.
 */
export function readResponse(socket: Socket, waitMs = 20_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const done = (error: Error | null, response?: RawResponse): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (error) reject(error);
      else resolve(response as RawResponse);
    };
    const timer = setTimeout(
      () => done(new Error(`no complete response within ${waitMs} ms: ${data.toString('latin1').slice(0, 200)}`)),
      waitMs,
    );
    const onData = (chunk: Buffer): void => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (data.length < end + 4 + length) return;
      done(null, {
        status: Number(statusLine?.split(' ')[1]),
        headers,
        body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
    };
    const onClose = (): void =>
      done(new Error(`socket closed before a complete response: ${data.toString('latin1').slice(0, 200)}`));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** Resolves true once the peer has closed `socket` (it ended or reset), false after `waitMs`. */
export function closedByPeer(socket: Socket, waitMs = 20_000): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    const closed = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once('end', closed);
    socket.once('close', closed);
    socket.once('error', closed);
    socket.resume();
  });
}

/** Sends `text` on a fresh socket and reads the one response. */
export async function rawRequest(port: number, text: string | Buffer): Promise<RawResponse & { socket: Socket }> {
  const socket = await openSocket(port);
  const response = readResponse(socket);
  socket.write(text);
  return { ...(await response), socket };
}
