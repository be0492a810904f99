// Compressed and re-encoded SDK uploads: gzip is accepted and its limits count the inflated bytes
// (a body inflating past them is a 413 while it inflates, never inflated whole); any other
// Content-Encoding, a charset other than UTF-8 and a UTF-16 byte order mark are a 415 naming it;
// a gzip label on bytes that are not gzip is a 400 naming the encoding error. Real upload route in process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { ApiError } from '../../src/api/http/errors.js';
import { uploadBody } from '../../src/api/http/upload-encoding.js';
import { workspace, type Workspace } from '../helpers/workspace.js';

const clock = new Date('2026-11-21T09:00:00Z');
const LIMIT = 256 * 1024;
let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let token: string;

const record = (tripId: string) => ({
  tripId,
  os: 'ios',
  startTime: '2026-11-20T10:00:00Z',
  endTime: '2026-11-20T10:10:00Z',
  points: [
    { t: '2026-11-20T10:00:00Z', lat: 52.5, lng: 13.4, speed: 10 },
    { t: '2026-11-20T10:10:00Z', lat: 52.55, lng: 13.4, speed: 10 },
  ],
});
const upload = (payload: Buffer | string, headers: Record<string, string> = {}) =>
  api.app.inject({
    method: 'POST',
    url: '/v1/sdk/trips',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload,
  });
/** Zeros inside a JSON string: a few hundred bytes of gzip that inflate to `bytes`. */
const bomb = (bytes: number) =>
  gzipSync(Buffer.concat([Buffer.from('{"tripId":"'), Buffer.alloc(bytes, 0x30), Buffer.from('"}')]), { level: 9 });

beforeAll(async () => {
  ws = await workspace('UTC');
  const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50, limits: { sdkBodyLimitBytes: LIMIT } });
  token = (
    await api.app.inject({ method: 'POST', url: '/v1/org-user/u1/token', headers: { authorization: `Bearer ${key}` } })
  ).json().token;
});
afterAll(async () => {
  await api.close();
  ws.cleanup();
});

describe('Content-Encoding of the SDK upload', () => {
  it('accepts a gzip body (and identity, and x-gzip)', async () => {
    const gz = await upload(gzipSync(JSON.stringify([record('gz-1'), record('gz-2')])), { 'content-encoding': 'gzip' });
    expect(gz.statusCode, gz.body).toBe(202);
    expect(gz.json()).toMatchObject({ accepted: 2, rejected: [] });
    expect((await upload(JSON.stringify(record('id-1')), { 'content-encoding': 'identity' })).statusCode).toBe(202);
    expect((await upload(gzipSync(JSON.stringify(record('xgz-1'))), { 'content-encoding': 'x-gzip' })).statusCode).toBe(
      202,
    );
  });

  it('counts the limit on the inflated bytes: a gzip body under the limit that inflates past it is a 413', async () => {
    const body = bomb(4 * LIMIT);
    expect(body.length).toBeLessThan(LIMIT / 10);
    const res = await upload(body, { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      code: 41301,
      error: 'payload_too_large',
      message: `body: larger than the ${LIMIT} bytes this operation takes once inflated`,
      requestId: res.headers['x-request-id'],
    });
  });

  it('stops inflating once the limit is passed: the rest of a bomb is neither inflated nor read', async () => {
    const compressed = bomb(64 * 1024 * 1024);
    const pieces: Buffer[] = [];
    for (let at = 0; at < compressed.length; at += 1024) pieces.push(compressed.subarray(at, at + 1024));
    let pulled = 0;
    const source = Readable.from(
      (function* () {
        for (const piece of pieces) {
          pulled++;
          yield piece;
        }
      })(),
    );
    const out = uploadBody({ 'content-encoding': 'gzip' }, source, LIMIT);
    let inflated = 0;
    const error = await new Promise<unknown>((resolve) => {
      out.on('data', (chunk: Buffer) => {
        inflated += chunk.length;
      });
      out.on('error', resolve);
      out.on('end', () => resolve(null));
    });
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(413);
    expect(inflated).toBeLessThanOrEqual(LIMIT);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pulled).toBeLessThan(pieces.length / 2);
  });

  it('refuses a gzip label on a body that is not gzip with a 400 naming the encoding error', async () => {
    const res = await upload(JSON.stringify(record('plain-1')), { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 40001, error: 'invalid_parameter' });
    expect(res.json().message).toMatch(/^body: Content-Encoding gzip: /);
  });

  it('refuses any other encoding with a 415 naming it, whatever the body', async () => {
    for (const encoding of ['br', 'deflate', 'compress', 'zstd', 'gzip, gzip']) {
      const res = await upload(JSON.stringify(record('enc-1')), { 'content-encoding': encoding });
      expect(res.statusCode, encoding).toBe(415);
      expect(res.json()).toEqual({
        code: 41501,
        error: 'unsupported_media_type',
        message: `Content-Encoding: '${encoding}' is not supported; send gzip or no encoding`,
        requestId: res.headers['x-request-id'],
      });
    }
  });
});

describe('charset of the SDK upload', () => {
  it('refuses a declared charset other than UTF-8 with a 415 naming it; utf-8 is fine', async () => {
    const text = JSON.stringify(record('cs-1'));
    const res = await upload(Buffer.from(`\ufeff${text}`, 'utf16le'), {
      'content-type': 'application/json; charset=utf-16',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      code: 41501,
      error: 'unsupported_media_type',
      message: "Content-Type: charset 'utf-16' is not supported; send UTF-8",
    });
    expect((await upload(text, { 'content-type': 'application/json; charset=UTF-8' })).statusCode).toBe(202);
  });

  it('refuses an undeclared UTF-16 body that starts with a byte order mark with a 415', async () => {
    const res = await upload(Buffer.from(`\ufeff${JSON.stringify(record('bom-1'))}`, 'utf16le'));
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      error: 'unsupported_media_type',
      message: 'body: UTF-16 (a byte order mark) is not supported; send UTF-8',
    });
  });
});
