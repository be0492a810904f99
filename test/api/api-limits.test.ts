import { describe, expect, it } from 'vitest';
import { jsonDepthAbove, parseJsonBody } from '../../src/api/http/json-body.js';
import { apiLimits, DEFAULT_LIMITS } from '../../src/api/http/limits.js';
import { parseDuration } from '../../src/apps/duration.js';

/** Depth of a parsed value, computed the plain recursive way. */
const depthOf = (v: unknown): number =>
  Array.isArray(v)
    ? 1 + Math.max(0, ...v.map(depthOf))
    : v !== null && typeof v === 'object'
      ? 1 + Math.max(0, ...Object.values(v).map(depthOf))
      : 0;

describe('JSON depth', () => {
  it('agrees with the depth of the parsed value, strings with brackets and escaped quotes included', () => {
    const samples = [
      '1',
      '[]',
      '{}',
      '[[1],[[2]]]',
      '{"a":{"b":[1,{"c":[]}]}}',
      '["[[[[", "\\"]]", {"x":"{{"}]',
      '{"k\\"[":[["]"]]}',
      '[[[[[[]]]]]]',
    ];
    for (const text of samples) {
      const depth = depthOf(JSON.parse(text));
      expect(jsonDepthAbove(text, depth), text).toBe(false);
      if (depth > 0) expect(jsonDepthAbove(text, depth - 1), text).toBe(true);
    }
  });

  it('refuses a body nested too deep before parsing, and bad JSON, naming the body', () => {
    expect(() => parseJsonBody(`${'['.repeat(100_000)}`, 32)).toThrow('body: JSON nested deeper than 32 levels');
    expect(() => parseJsonBody('{"a":', 32)).toThrow('body: not valid JSON');
    expect(parseJsonBody('', 32)).toBeUndefined();
    expect(parseJsonBody('[{"a":[1]}]', 3)).toEqual([{ a: [1] }]);
  });
});

describe('limits from the environment', () => {
  it('takes DRIVING_API_* variables over the defaults and refuses a zero that would refuse everything', () => {
    expect(apiLimits({})).toEqual(DEFAULT_LIMITS);
    const limits = apiLimits({
      DRIVING_API_RATE_PER_ADDRESS: '10',
      DRIVING_API_MAX_IN_FLIGHT: '0',
      DRIVING_API_SDK_BODY_LIMIT_BYTES: '1024',
    });
    expect(limits).toMatchObject({
      ratePerAddress: 10,
      maxInFlight: 0,
      sdkBodyLimitBytes: 1024,
      ratePerApp: DEFAULT_LIMITS.ratePerApp,
    });
    expect(() => apiLimits({ DRIVING_API_RATE_PER_APP: '0' })).toThrow('DRIVING_API_RATE_PER_APP must be at least 1');
    expect(() => apiLimits({ DRIVING_API_MAX_HEADER_BYTES: '16k' })).toThrow(
      /DRIVING_API_MAX_HEADER_BYTES must be a non-negative integer/,
    );
  });
});

describe('durations of the key commands', () => {
  it('takes 0 and whole numbers with s, m, h or d up to 30 days', () => {
    expect(parseDuration('--x', '0')).toBe(0);
    expect(parseDuration('--x', '45s')).toBe(45_000);
    expect(parseDuration('--x', '10m')).toBe(600_000);
    expect(parseDuration('--x', '24h')).toBe(86_400_000);
    expect(parseDuration('--x', '30d')).toBe(30 * 86_400_000);
    for (const bad of ['10', '1.5h', '-1m', '10 m', 'h', '31d', '1w'])
      expect(() => parseDuration('--x', bad), bad).toThrow(/--x/);
  });
});
