// Webhook URLs checked when they are set (API and CLI): every refused form named by its reason,
// names resolved (a stand-in resolver for names this machine cannot look up), the operator's
// loopback switch.
import { describe, expect, it } from 'vitest';
import { endpointRefusal, explainedRefusal, type ResolveAll } from '../../src/webhooks/endpoint-check.js';

const names: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'loopback.example.com': ['127.0.0.1'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.8'],
  'v6.example.com': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
};
const resolveAll: ResolveAll = async (host) => {
  const found = names[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const check = (url: string, allowLoopback = false) => endpointRefusal(url, { allowLoopback, resolveAll });

describe('a webhook URL when it is set', () => {
  it.each([
    ['http://hooks.example.com/x', /^url: must be https$/],
    ['ftp://hooks.example.com/x', /^url: must be https, not ftp$/],
    ['https://localhost/x', /^url: localhost resolves to 127\.0\.0\.1, a loopback address$/],
    ['https://127.0.0.1/x', /^url: 127\.0\.0\.1 is a loopback address$/],
    ['https://[::1]/x', /^url: ::1 is a loopback address$/],
    ['https://10.1.2.3/x', /^url: 10\.1\.2\.3 is a private address$/],
    ['https://172.16.0.1/x', /^url: 172\.16\.0\.1 is a private address$/],
    ['https://172.31.255.254/x', /^url: 172\.31\.255\.254 is a private address$/],
    ['https://192.168.1.1/x', /^url: 192\.168\.1\.1 is a private address$/],
    ['https://169.254.169.254/latest/meta-data', /^url: 169\.254\.169\.254 is a cloud metadata address$/],
    ['https://169.254.10.1/x', /^url: 169\.254\.10\.1 is a link-local address$/],
    ['https://[fd00::1]/x', /^url: fd00::1 is a unique-local address$/],
    ['https://[fe80::1]/x', /^url: fe80::1 is a link-local address$/],
    ['https://[::ffff:10.0.0.1]/x', /private address$/],
    [
      'https://metadata.google.internal/computeMetadata/v1/',
      /^url: metadata\.google\.internal is a cloud metadata address$/,
    ],
    ['https://loopback.example.com/x', /^url: loopback\.example\.com resolves to 127\.0\.0\.1, a loopback address$/],
    ['https://mixed.example.com/x', /^url: mixed\.example\.com resolves to 10\.0\.0\.8, a private address$/],
    ['https://nowhere.example.com/x', /^url: nowhere\.example\.com does not resolve \(ENOTFOUND\)$/],
    ['https://user:pw@hooks.example.com/x', /^url: must not carry credentials$/],
    ['not a url', /^url: not an absolute URL$/],
  ])('refuses %s, naming why', async (url, reason) => {
    expect(await check(url)).toMatch(reason);
  });

  it('takes https URLs whose host resolves to public addresses only', async () => {
    expect(await check('https://hooks.example.com/driving?token=1')).toBeNull();
    expect(await check('https://v6.example.com/x')).toBeNull();
    expect(await check('https://93.184.215.14:8443/x')).toBeNull();
  });

  it('resolves names with the system resolver by default', async () => {
    expect(await endpointRefusal('https://app.localhost:8443/x', { allowLoopback: false })).toMatch(
      /^url: app\.localhost resolves to 127\.0\.0\.1, a loopback address$/,
    );
    expect(await endpointRefusal('https://no-such-host.invalid/x', { allowLoopback: false })).toMatch(
      /^url: no-such-host\.invalid does not resolve/,
    );
  });

  it("with the operator's loopback switch, takes http and loopback receivers, and nothing private besides", async () => {
    expect(await check('http://127.0.0.1:9000/x', true)).toBeNull();
    expect(await check('https://localhost/x', true)).toBeNull();
    expect(await check('http://loopback.example.com/x', true)).toBeNull();
    expect(await check('http://hooks.example.com/x', true)).toMatch(/plain http only to a loopback host/);
    expect(await check('https://10.1.2.3/x', true)).toMatch(/private address/);
    expect(await check('https://169.254.169.254/x', true)).toMatch(/metadata/);
  });

  it('names the loopback switch when only it would take the URL (a loopback host, plain http to one), never for a private, metadata or public host', async () => {
    const explain = (url: string, allowLoopback = false) => explainedRefusal(url, { allowLoopback, resolveAll });
    const hint =
      ' (for local testing, the operator allows loopback hosts (and plain http to them) with DRIVING_WEBHOOK_ALLOW_LOOPBACK=1 on the API, the deliverer and apps.js)';
    expect(await explain('http://127.0.0.1:9000/x')).toBe(`url: must be https${hint}`);
    expect(await explain('https://127.0.0.1/x')).toBe(`url: 127.0.0.1 is a loopback address${hint}`);
    expect(await explain('https://localhost/x')).toBe(
      `url: localhost resolves to 127.0.0.1, a loopback address${hint}`,
    );
    expect(await explain('http://loopback.example.com/x')).toBe(`url: must be https${hint}`);
    for (const url of [
      'http://hooks.example.com/x',
      'https://10.1.2.3/x',
      'https://169.254.169.254/x',
      'https://metadata.google.internal/x',
      'https://mixed.example.com/x',
      'https://nowhere.example.com/x',
    ]) {
      expect(await explain(url), url).toBe(await check(url));
      expect(await explain(url), url).not.toContain('DRIVING_WEBHOOK_ALLOW_LOOPBACK');
    }
    expect(await explain('https://localhost/x', true)).toBeNull();
  });
});
