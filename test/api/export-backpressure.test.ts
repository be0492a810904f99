// The bulk export under a client that does not read: the response is pulled, so the server must
// stop reading batches from DuckDB once the socket's buffers are full, go on when the client reads,
// and give every trip; a client that goes away must let its snapshot go. A real server on
// loopback and a raw socket client, whose reads the test turns off and on. Nothing here asserts a
// speed: the counts are polled until they stop changing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { tableFromIPC } from 'apache-arrow';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { exportStats } from '../../src/api/export/export-stats.js';
import { runLoad } from '../../src/jobs/load.js';
import { PassportStore } from '../../src/passport/store.js';
import { openSocket } from '../helpers/raw-http.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

const TRIPS = 1_200;
const EVENTS_PER_TRIP = 100;
const BATCH = 20;
const BATCHES = TRIPS / BATCH;

let ws: Workspace;
let api: Awaited<ReturnType<typeof createApi>>;
let port: number;
let key: string;
const sockets: Socket[] = [];
const clock = new Date('2026-11-21T09:00:00Z');

beforeAll(async () => {
  process.env['DRIVING_API_EXPORT_BATCH_TRIPS'] = String(BATCH);
  ws = await workspace('UTC');
  key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const passport = await PassportStore.open(ws.paths.passportFile);
  const users = Array.from({ length: 10 }, (_, u) => `driver-${u}`);
  const ids = await passport.ensureAccounts(ws.appId, users);
  passport.close();
  // many events a short trip (few points to load; an event may outlast its trip): the export is some 23 MB of NDJSON and 13 MB of
  // Arrow in 60 batches, several times the 4 MB a paused loopback socket took in here (the sender's
  // buffer grows to net.ipv4.tcp_wmem's maximum, 4 MiB on Linux by default): 11 NDJSON and 19 Arrow
  // batches were read while paused
  const records = Array.from({ length: TRIPS }, (_, i) => {
    const start = Date.parse('2026-11-01T00:00:00Z') + i * 600_000;
    const at = (ms: number) => new Date(start + ms).toISOString();
    return tripRecord({
      appId: ws.appId,
      tripId: `trip-${String(i).padStart(5, '0')}`,
      userId: ids.get(users[i % 10] as string) as number,
      orgUserId: users[i % 10],
      start: at(0),
      seconds: 10,
      extra: {
        events: Array.from({ length: EVENTS_PER_TRIP }, (_, e) => ({
          type: e % 2 ? 'brake' : 'throttle',
          startTime: at(e * 1000),
          endTime: at(e * 1000 + 500),
          startPoint: { lat: 52.5, lng: 13.4 },
          endPoint: { lat: 52.5, lng: 13.41 },
        })),
      },
    });
  });
  await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'trips.ndjson'), records)], now: clock });
  api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  port = (api.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  delete process.env['DRIVING_API_EXPORT_BATCH_TRIPS'];
  await api?.close();
  ws?.cleanup();
});

/** Polls `read` until it gave the same value `times` polls in a row (a bound only for a stuck test). */
async function settled(read: () => number, times = 20, everyMs = 100): Promise<number> {
  let last = read();
  let same = 0;
  for (let polls = 0; polls < 3_000; polls++) {
    await new Promise((r) => setTimeout(r, everyMs));
    const now = read();
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= times) return now;
  }
  throw new Error(`still changing after 3,000 polls: ${last}`);
}

/** Polls until `ok` holds (a bound only for a stuck test). */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let polls = 0; polls < 3_000; polls++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never: ${what}`);
}

/** The body of a chunked HTTP response (headers cut off), decoded. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = raw.indexOf('\r\n\r\n') + 4;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Sends the export request on a raw socket that does not read until the test resumes it. */
async function pausedExport(accept: string) {
  const socket = await openSocket(port);
  sockets.push(socket);
  socket.pause();
  socket.write(
    `GET /v1/exports/trips HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`,
  );
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<Buffer>((resolve, reject) => {
    socket.once('end', () => resolve(Buffer.concat(chunks)));
    socket.once('error', reject);
  });
  // 'data' listeners resume a socket: paused again, so nothing is read from the kernel
  socket.pause();
  return { socket, ended };
}

describe('GET /v1/exports/trips under a slow client', () => {
  it.each([['application/x-ndjson'], ['application/vnd.apache.arrow.stream']])(
    '%s: reads no further batches while the client does not read, then gives every trip',
    async (accept) => {
      const before = exportStats.batchesRead;
      const { socket, ended } = await pausedExport(accept);
      await until(() => exportStats.batchesRead > before, 'the export read its first batch');
      // settled for 0.8 s: stopping early only makes the count smaller, which proves the same
      const whilePaused = (await settled(() => exportStats.batchesRead, 8)) - before;
      const holding = exportStats.holding;
      socket.resume();
      const body = dechunk(await ended);
      // what fitted the socket's buffers and the stream's: some batches, far from all of them
      expect(whilePaused).toBeGreaterThan(0);
      expect(whilePaused).toBeLessThan(BATCHES / 2);
      expect(holding).toBeGreaterThan(0);
      expect(exportStats.batchesRead - before).toBe(BATCHES);
      const ids =
        accept === 'application/x-ndjson'
          ? body
              .toString('utf8')
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as { tripId: string; events: unknown[] })
          : tableFromIPC(body)
              .toArray()
              .map((r) => r.toJSON() as { tripId: string; events: { length: number } });
      expect(ids.map((t) => t.tripId)).toEqual(
        Array.from({ length: TRIPS }, (_, i) => `trip-${String(i).padStart(5, '0')}`),
      );
      expect(ids.every((t) => t.events.length === EVENTS_PER_TRIP)).toBe(true);
      await until(() => exportStats.holding === 0, 'the snapshot released');
      console.log(accept, 'batches read while paused', whilePaused, 'of', BATCHES, 'bytes', body.length);
    },
  );

  it('lets the snapshot go and reads no further when the client disconnects mid-export', async () => {
    const before = exportStats.batchesRead;
    const { socket, ended } = await pausedExport('application/x-ndjson');
    ended.catch(() => undefined);
    await until(() => exportStats.batchesRead > before, 'the export read its first batch');
    const whilePaused = (await settled(() => exportStats.batchesRead)) - before;
    expect(whilePaused).toBeLessThan(BATCHES / 2);
    expect(exportStats.holding).toBe(1);
    socket.destroy();
    await until(() => exportStats.holding === 0, 'the snapshot released after the client went away');
    const after = (await settled(() => exportStats.batchesRead, 10)) - before;
    // at most the batch being read when the socket closed, never the rest of the export
    expect(after).toBeLessThanOrEqual(whilePaused + 1);
    expect(after).toBeLessThan(BATCHES);
  });
});
