// Delivery over HTTPS, as in production: a real TLS receiver on a loopback port. The certificate
// is verified (a self-signed one fails the attempt) unless its CA is configured, as for a staging
// receiver with a private CA.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../src/webhooks/signature.js';
import { appSecret, openDeliverer, setWebhook, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const TLS = join(import.meta.dirname, '..', 'fixtures', 'tls');
const fixture = useWebhookWorkspace();
let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
});

async function httpsReceiver(bodies: Buffer[], headers: string[]): Promise<number> {
  server = createServer(
    { key: readFileSync(join(TLS, 'localhost.key')), cert: readFileSync(join(TLS, 'localhost.crt')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        headers.push(String(req.headers['authorization']));
        res.writeHead(204).end();
      });
    },
  );
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('delivery over https', () => {
  it('verifies the receiver certificate: a self-signed one fails the attempt, its CA configured lets it through', async () => {
    const ws = fixture.ws();
    const bodies: Buffer[] = [];
    const headers: string[] = [];
    const port = await httpsReceiver(bodies, headers);
    await setWebhook(ws, `https://localhost:${port}/hooks`);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_tls' }]);
    const untrusted = await openDeliverer(ws, testSettings({ scheduleMs: [1] }));
    try {
      await untrusted.deliverer.step({ intake: 'always' });
      await untrusted.deliverer.close();
      const [attempt] = await untrusted.outbox.rows('select status_code, error from attempts');
      expect(attempt?.['status_code']).toBeNull();
      expect(String(attempt?.['error'])).toMatch(/self[- ]signed/i);
      expect(bodies).toHaveLength(0);
    } finally {
      await untrusted.outbox.close();
    }
    const trusted = await openDeliverer(ws, testSettings({ scheduleMs: [1], caFile: join(TLS, 'localhost.crt') }));
    try {
      await new Promise((r) => setTimeout(r, 5));
      await trusted.deliverer.runOnce();
    } finally {
      await trusted.close();
    }
    expect(bodies).toHaveLength(1);
    expect(verifyWebhook(bodies[0] as Buffer, headers[0], await appSecret(ws))).toBe(true);
  });
});
