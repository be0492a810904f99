// A minimal HTTP/1.1 client for the load generator: GETs over kept-alive `net` sockets, one request
// at a time a socket, the request bytes built once a path, and a response read only as far as its
// status, its length and its end. It exists for the CPU it saves: on 2 cores shared by the server
// and its load generator, every share of a core the generator takes is one the server cannot use,
// and undici takes a large share at the rates measured. What it does not do: pipelining, redirects,
// bodies to send, TLS, decompression.
import { connect, type Socket } from 'node:net';

export interface RawHandler {
  /** The whole response has arrived. */
  onComplete(status: number): void;
  /** The connection failed with the request on it (its code, ECONNRESET, ..., or `SOCKET_CLOSED`). */
  onError(kind: string): void;
}

/** A kept-alive connection idle this long is not reused (the server closes them after 5 s). */
const STALE_MS = 4_000;

interface Conn {
  socket: Socket;
  handler: RawHandler | null;
  lastUsed: number;
  rest: Buffer | null;
  headersDone: boolean;
  status: number;
  /** Body bytes still to come; -1: until the connection closes; chunked: the current chunk's. */
  bodyLeft: number;
  chunked: boolean;
  close: boolean;
}

export class RawHttpPool {
  private readonly host: string;
  private readonly port: number;
  private readonly head: string;
  private readonly requests = new Map<string, Buffer>();
  private readonly idle: Conn[] = [];
  private readonly queue: [Buffer, RawHandler][] = [];
  private queueHead = 0;
  private open = 0;

  constructor(
    url: string,
    private readonly connections: number,
    headers: Record<string, string>,
  ) {
    const u = new URL(url);
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port || 80);
    this.head = `Host: ${u.host}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
  }

  get(path: string, handler: RawHandler): void {
    let bytes = this.requests.get(path);
    if (!bytes) {
      bytes = Buffer.from(`GET ${path} HTTP/1.1\r\n${this.head}`, 'latin1');
      this.requests.set(path, bytes);
    }
    const conn = this.take();
    if (conn) this.send(conn, bytes, handler);
    else this.queue.push([bytes, handler]);
  }

  close(): void {
    for (const conn of this.idle.splice(0)) conn.socket.destroy();
  }

  /**
   * A new connection while under the limit, then the one idle longest: the requests go round all
   * the connections, as from that many clients. A cluster's primary hands new connections to its
   * workers in turn and a kept-alive one stays with its worker, so this splits the requests
   * evenly between workers. Reusing the most recently used connection instead kept a handful busy
   * (as many as were in flight at once), whichever workers they happened to be on, and split the
   * CPU between two workers unevenly.
   */
  private take(): Conn | null {
    if (this.open < this.connections) return this.dial();
    const now = performance.now();
    for (let conn = this.idle.shift(); conn; conn = this.idle.shift()) {
      if (now - conn.lastUsed < STALE_MS && !conn.socket.destroyed) return conn;
      conn.socket.destroy();
    }
    return this.open < this.connections ? this.dial() : null;
  }

  private dial(): Conn {
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    const conn: Conn = {
      socket,
      handler: null,
      lastUsed: 0,
      rest: null,
      headersDone: false,
      status: 0,
      bodyLeft: 0,
      chunked: false,
      close: false,
    };
    this.open++;
    let failure: string | null = null;
    socket.on('data', (chunk: Buffer) => this.read(conn, chunk));
    socket.on('error', (error: Error & { code?: string }) => (failure = error.code ?? error.name));
    socket.on('close', () => {
      this.open--;
      const handler = conn.handler;
      conn.handler = null;
      if (handler && conn.headersDone && conn.bodyLeft === -1) handler.onComplete(conn.status);
      else if (handler) handler.onError(failure ?? 'SOCKET_CLOSED');
      const at = this.idle.indexOf(conn);
      if (at >= 0) this.idle.splice(at, 1);
      this.next();
    });
    return conn;
  }

  private send(conn: Conn, bytes: Buffer, handler: RawHandler): void {
    conn.handler = handler;
    conn.headersDone = false;
    conn.rest = null;
    conn.socket.write(bytes);
  }

  private next(): void {
    while (this.queueHead < this.queue.length) {
      const conn = this.take();
      if (!conn) return;
      const [bytes, handler] = this.queue[this.queueHead] as [Buffer, RawHandler];
      this.queue[this.queueHead++] = undefined as unknown as [Buffer, RawHandler];
      if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue.splice(0, this.queueHead);
        this.queueHead = 0;
      }
      this.send(conn, bytes, handler);
    }
  }

  private read(conn: Conn, chunk: Buffer): void {
    let buf = conn.rest ? Buffer.concat([conn.rest, chunk]) : chunk;
    conn.rest = null;
    if (!conn.headersDone) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        conn.rest = buf;
        return;
      }
      const head = buf.toString('latin1', 0, end).toLowerCase();
      conn.status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/.exec(head);
      conn.chunked = /\r\ntransfer-encoding: *chunked/.test(head);
      conn.close = /\r\nconnection: *close/.test(head);
      conn.bodyLeft =
        conn.status === 204 || conn.status === 304 ? 0 : length ? Number(length[1]) : conn.chunked ? 0 : -1;
      conn.headersDone = true;
      buf = buf.subarray(end + 4);
    }
    if (conn.bodyLeft === -1) return;
    if (conn.chunked) {
      const left = skipChunks(conn, buf);
      if (left === null) return;
    } else {
      conn.bodyLeft -= Math.min(conn.bodyLeft, buf.length);
      if (conn.bodyLeft > 0) return;
    }
    this.complete(conn);
  }

  private complete(conn: Conn): void {
    const handler = conn.handler as RawHandler;
    conn.handler = null;
    conn.lastUsed = performance.now();
    if (conn.close) conn.socket.destroy();
    else this.idle.push(conn);
    handler.onComplete(conn.status);
    this.next();
  }
}

/**
 * Consumes a chunked body as far as `buf` goes: null while more is to come (the unread part kept in
 * `conn.rest`), 0 once the last chunk and the empty line after it have arrived (no trailers).
 */
function skipChunks(conn: Conn, buf: Buffer): number | null {
  let at = 0;
  for (;;) {
    if (conn.bodyLeft > 0) {
      const take = Math.min(conn.bodyLeft, buf.length - at);
      conn.bodyLeft -= take;
      at += take;
      if (conn.bodyLeft > 0) return null;
      // the chunk's own CRLF is part of its "body"
      continue;
    }
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) {
      conn.rest = buf.subarray(at);
      return null;
    }
    const size = Number.parseInt(buf.toString('latin1', at, eol), 16);
    if (size === 0) {
      if (buf.length < eol + 4) {
        conn.rest = buf.subarray(at);
        return null;
      }
      return 0;
    }
    at = eol + 2;
    // the chunk's bytes, then its CRLF
    conn.bodyLeft = size + 2;
  }
}
