// The SSRF guard: which addresses are refused, checked on the URL and again at connect time. No
// test sends anything to a non-loopback address: refusals are checked as functions, and end to
// end only with loopback targets while the loopback opt-in is off.
import { beforeEach, describe, expect, it } from 'vitest';
import { blockedReason, guardedLookup, loopbackOnly, publicOnly, urlRefusal } from '../../src/address-guard.js';
import { validateWebhookUrl } from '../../src/apps/store.js';
import { parseDuration, parseSchedule, deliverySettings } from '../../src/webhooks/delivery-settings.js';
import type { Receiver } from '../helpers/receiver.js';
import type { Workspace } from '../helpers/workspace.js';
import { openDeliverer, setWebhook, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

describe('refused addresses', () => {
  it.each([
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '127.0.0.1',
    '127.8.9.10',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::1',
    '::',
    'fd00::1',
    'fc00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '::a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b::a00:1',
    '2001:db8::1',
    '2002:a00:1::1',
  ])('%s is refused', (address) => {
    expect(blockedReason(address, false)).not.toBeNull();
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    '%s is allowed',
    (address) => {
      expect(blockedReason(address, false)).toBeNull();
    },
  );

  it('allows loopback, and only loopback, with the opt-in', () => {
    expect(blockedReason('127.0.0.1', true)).toBeNull();
    expect(blockedReason('::1', true)).toBeNull();
    expect(blockedReason('10.0.0.1', true)).not.toBeNull();
    expect(blockedReason('169.254.169.254', true)).not.toBeNull();
  });

  it('refuses URLs by scheme, credentials and address literals in every spelling the URL parser accepts', () => {
    expect(urlRefusal('https://hooks.example.com/x', false)).toBeNull();
    expect(urlRefusal('http://hooks.example.com/x', true)).toMatch(/plain http/);
    expect(urlRefusal('http://127.0.0.1:8080/x', false)).toMatch(/plain http/);
    expect(urlRefusal('http://127.0.0.1:8080/x', true)).toBeNull();
    expect(urlRefusal('http://localhost:8080/x', true)).toBeNull();
    expect(urlRefusal('ftp://hooks.example.com/x', false)).toMatch(/not https/);
    expect(urlRefusal('https://user:pw@hooks.example.com/x', false)).toMatch(/credentials/);
    expect(urlRefusal('https://user@[::1]/x', true)).toMatch(/credentials/);
    for (const sneaky of [
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::1]/',
      'https://10.0.0.1/',
      'https://169.254.169.254/latest',
    ]) {
      expect(urlRefusal(sneaky, false), sneaky).toMatch(/^blocked: .*address/);
    }
  });

  it('checks every address a name resolves to at connect time, and keeps only the allowed ones', async () => {
    const resolver =
      (answers: string[]) =>
      (_host: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
        cb(
          null,
          answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
    const ask = (answers: string[], all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((resolve) =>
        guardedLookup(publicOnly(false), resolver(answers) as never)('rebind.example', { all }, (error, address) =>
          resolve({ error, address }),
        ),
      );
    expect((await ask(['10.0.0.7'], false)).error?.message).toMatch(
      /blocked: rebind.example resolves only to refused addresses/,
    );
    expect((await ask(['fd00::7', '192.168.0.7'], true)).error).not.toBeNull();
    expect(await ask(['10.0.0.7', '93.184.215.14'], false)).toEqual({ error: null, address: '93.184.215.14' });
    expect((await ask(['10.0.0.7', '93.184.215.14', '2606:4700::1'], true)).address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
  });

  it('lets plain http (loopback opt-in) reach only addresses that really are loopback, whatever the name', async () => {
    const resolver =
      (answers: string[]) =>
      (_host: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
        cb(
          null,
          answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
    const ask = (answers: string[]) =>
      new Promise<Error | null>((resolve) =>
        guardedLookup(loopbackOnly, resolver(answers) as never)('x.localhost', {}, (error) => resolve(error)),
      );
    expect(await ask(['127.0.0.1'])).toBeNull();
    expect(await ask(['::1'])).toBeNull();
    expect((await ask(['93.184.215.14']))?.message).toMatch(/not a loopback address/);
  });

  it('refuses private address literals when the URL is saved', () => {
    expect(() => validateWebhookUrl('https://10.0.0.1/hook')).toThrow(/private or reserved/);
    expect(() => validateWebhookUrl('https://[fd00::1]/hook')).toThrow(/private or reserved/);
    expect(() => validateWebhookUrl('http://example.com/hook')).toThrow(/must be https/);
    expect(validateWebhookUrl('http://127.0.0.1:9000/hook')).toBe('http://127.0.0.1:9000/hook');
    expect(validateWebhookUrl('https://hooks.example.com/in')).toBe('https://hooks.example.com/in');
  });
});

describe('settings', () => {
  it('default to the interface: 10 s timeout, 1m 5m 20m 60m 6h 24h', () => {
    const s = deliverySettings({});
    expect(s.timeoutMs).toBe(10_000);
    expect(s.scheduleMs).toEqual([60_000, 300_000, 1_200_000, 3_600_000, 21_600_000, 86_400_000]);
    expect(s.allowLoopback).toBe(false);
  });

  it('can be overridden for staging and tests, and refuse nonsense', () => {
    expect(
      deliverySettings({
        DRIVING_WEBHOOK_TIMEOUT: '250ms',
        DRIVING_WEBHOOK_SCHEDULE: '10ms,1s',
        DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1',
      }),
    ).toMatchObject({ timeoutMs: 250, scheduleMs: [10, 1_000], allowLoopback: true });
    expect(parseDuration('1.5h', 'x')).toBe(5_400_000);
    expect(() => parseSchedule('1m,soon')).toThrow(/DRIVING_WEBHOOK_SCHEDULE must be a duration/);
    expect(() => deliverySettings({ DRIVING_WEBHOOK_PER_ENDPOINT: '0' })).toThrow(/at least 1/);
  });
});

describe('the deliverer with the loopback opt-in off', () => {
  const fixture = useWebhookWorkspace();
  let ws: Workspace;
  let receiver: Receiver;
  beforeEach(async () => {
    ws = fixture.ws();
    receiver = await fixture.receiver();
  });

  it('sends nothing to a loopback receiver, whether named by address (refused before connecting) or by name (refused at connect time)', async () => {
    await setWebhook(ws, receiver.url);
    writeEvents(ws, 'v1.ndjson', [{ id: 'evt_literal' }]);
    const d = await openDeliverer(ws, testSettings({ allowLoopback: false }));
    try {
      await d.deliverer.runOnce();
      await setWebhook(ws, `https://localhost:${receiver.port}/hooks`);
      writeEvents(ws, 'v2.ndjson', [{ id: 'evt_name' }]);
      await d.deliverer.runOnce();
      const errors = await d.outbox.rows('select event_id, error from attempts order by seq');
      expect(errors[0]).toEqual({
        event_id: 'evt_literal',
        error: 'blocked: plain http is allowed only to loopback hosts with DRIVING_WEBHOOK_ALLOW_LOOPBACK',
      });
      expect(errors[1]?.['event_id']).toBe('evt_name');
      expect(String(errors[1]?.['error'])).toMatch(/^blocked: localhost resolves only to refused addresses .*loopback/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await d.close();
    }
  });
});
