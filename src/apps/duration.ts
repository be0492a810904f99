import { InputError } from '../errors.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A CLI duration: `0`, or a whole number with a unit `s`, `m`, `h` or `d`, at most `maxMs`.
 * @example parseDuration('--expire-previous', '10m') // 600000
 */
export function parseDuration(flag: string, raw: string, maxMs = 30 * UNIT_MS.d): number {
  const match = /^(\d{1,6})(s|m|h|d)?$/.exec(raw.trim());
  if (!match || (match[2] === undefined && match[1] !== '0' && !/^0+$/.test(match[1] as string))) {
    throw new InputError(`${flag} must be 0 or a whole number with a unit s, m, h or d (10m, 24h), got '${raw}'`);
  }
  const ms = Number(match[1]) * (match[2] ? UNIT_MS[match[2] as keyof typeof UNIT_MS] : 0);
  if (ms > maxMs) throw new InputError(`${flag} must be at most ${maxMs / UNIT_MS.d} days, got '${raw}'`);
  return ms;
}
