import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { guardedLookup, loopbackOnly, publicOnly, urlRefusal } from '../address-guard.js';

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface SendResult {
  /** The receiver's status code, when it answered. */
  statusCode: number | null;
  /** Why the attempt failed without a 2xx: a status, a timeout, a network error, a refusal. */
  error: string | null;
  /**
   * `answered`: the receiver sent a status (2xx or not). `unanswered`: a timeout, a refused or
   * reset connection, a DNS failure (what opens a breaker). `refused`: not sent, the target is not
   * allowed (SSRF guard, http without the opt-in).
   */
  reach: 'answered' | 'unanswered' | 'refused';
  durationMs: number;
  /** Retry-After of a 429 or 503, in milliseconds. */
  retryAfterMs?: number;
}

const RESPONSE_SNIPPET = 200;

/**
 * Makes one delivery attempt: POST, no redirects followed (a 3xx fails), a 2xx within the timeout
 * is success. The whole answer (status and body) must arrive within `timeoutMs`. Keep-alive
 * agents reuse connections; their `lookup` refuses private addresses at connect time.
 */
export class Sender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly options: { timeoutMs: number; allowLoopback: boolean; perEndpoint: number; caFile: string | null },
  ) {
    type Lookup = http.AgentOptions['lookup'];
    const common = { keepAlive: true, maxSockets: options.perEndpoint };
    // plain http is for loopback receivers only: its names must resolve to loopback addresses
    this.httpAgent = new http.Agent({ ...common, lookup: guardedLookup(loopbackOnly) as unknown as Lookup });
    // an extra CA is added to Node's own roots, not put in their place
    const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
    this.httpsAgent = new https.Agent({
      ...common,
      lookup: guardedLookup(publicOnly(options.allowLoopback)) as unknown as Lookup,
      ...(ca ? { ca } : {}),
    });
  }

  /** URL checks do not change for a URL (names are checked at connect time), so they are kept. */
  private readonly refusals = new Map<string, string | null>();

  send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let refusal = this.refusals.get(request.url);
    if (refusal === undefined) {
      refusal = urlRefusal(request.url, this.options.allowLoopback);
      if (this.refusals.size > 10_000) this.refusals.clear();
      this.refusals.set(request.url, refusal);
    }
    if (refusal) return Promise.resolve({ statusCode: null, error: refusal, reach: 'refused', durationMs: 0 });
    const url = new URL(request.url);
    const body = Buffer.from(request.body, 'utf8');
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, durationMs: elapsed() });
      };
      const req = client.request(url, {
        method: 'POST',
        agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        headers: { ...request.headers, 'Content-Length': String(body.length) },
      });
      const timer = setTimeout(() => {
        finish({
          statusCode: null,
          error: `timeout: no complete answer within ${this.options.timeoutMs} ms`,
          reach: 'unanswered',
        });
        req.destroy();
      }, this.options.timeoutMs);
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let snippet = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (snippet.length < RESPONSE_SNIPPET) snippet += chunk.slice(0, RESPONSE_SNIPPET - snippet.length);
        });
        res.on('end', () => {
          if (status >= 200 && status < 300) return finish({ statusCode: status, error: null, reach: 'answered' });
          const retryAfterMs =
            status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after']) : undefined;
          const detail =
            status >= 300 && status < 400
              ? `redirect to ${res.headers.location ?? '?'} not followed`
              : wellFormed(snippet).trim().replace(/\s+/g, ' ');
          finish({
            statusCode: status,
            error: `HTTP ${status}${detail ? `: ${detail}` : ''}`,
            reach: 'answered',
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          });
        });
        res.on('error', (error) =>
          finish({ statusCode: status, error: `HTTP ${status}, then ${describe(error)}`, reach: 'answered' }),
        );
      });
      req.on('error', (error) => {
        const blocked = (error as NodeJS.ErrnoException).code === 'EBLOCKED';
        finish({ statusCode: null, error: describe(error), reach: blocked ? 'refused' : 'unanswered' });
      });
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && code !== 'EBLOCKED' ? `${code}: ${error.message}` : error.message;
}

/** Cutting text can split a surrogate pair; the database takes only well-formed text. */
function wellFormed(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
