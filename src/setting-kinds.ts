import { InputError } from './errors.js';

/**
 * One setting of the service, as src/settings.ts declares it: how its text is read, its default,
 * the flag that overrides it and what it does. docs/configuration.md shows the same table.
 */
export interface Setting<T> {
  kind: 'integer' | 'bytes' | 'duration' | 'durations' | 'enum' | 'boolean' | 'switch' | 'string' | 'path' | 'url';
  /** The value when the variable is unset or empty. */
  fallback: T;
  /** The default as the docs say it (`unset`, `one per core`). */
  shown: string;
  /** What the variable may hold, as the docs say it. */
  allowed: string;
  /** The command-line flag that wins over the variable, where a job has one (`serve.js --port`). */
  flag?: string;
  /** One line: what the setting does. */
  describe: string;
  /** The value of a non-empty text; an InputError naming the variable, the text and what is allowed. */
  parse(raw: string, name: string): T;
}

type About = { describe: string; flag?: string; shown?: string };

const got = (raw: string): string => `got '${raw}'`;

/**
 * A whole number (JavaScript's Number() reading of the text) of at least `min`, at most `max`.
 * `raise`: a value below it counts as it (a 0 that has always meant 1).
 */
export function integer<F extends number | null>(
  fallback: F,
  about: About & { min?: number; max?: number; raise?: number; unit?: string },
): Setting<number | F> {
  const { min = 0, max, raise, unit } = about;
  const range = max === undefined ? `${min} or more` : `${min} to ${max}`;
  return {
    kind: 'integer',
    fallback,
    shown: about.shown ?? (fallback === null ? 'unset' : String(fallback)),
    flag: about.flag,
    describe: about.describe,
    allowed: `${unit ? `${unit}: ` : 'integer, '}${range}${raise === undefined ? '' : ` (below ${raise} counts as ${raise})`}`,
    parse(raw, name) {
      const value = Number(raw);
      if (!Number.isInteger(value) || value < 0)
        throw new InputError(`${name} must be a non-negative integer, ${got(raw)}`);
      if (value < min) throw new InputError(`${name} must be at least ${min}, ${got(raw)}`);
      if (max !== undefined && value > max) throw new InputError(`${name} must be at most ${max}, ${got(raw)}`);
      return raise === undefined ? value : Math.max(raise, value);
    },
  };
}

// DuckDB's units of a size (its memory_limit), any case
const SIZE =
  /^\s*\d+(?:\.\d+)?\s*(?:b|bytes?|k|kb|kib|kbyte|kilobytes?|m|mb|mib|mbyte|megabytes?|g|gb|gib|gbyte|gigabytes?|t|tb|tib|tbyte|terabytes?)\s*$/i;

/** A size in DuckDB's words (`512MB`, `2.5GB`, `1GiB`), handed to DuckDB as written. */
export function bytes(fallback: string, about: About): Setting<string> {
  return {
    kind: 'bytes',
    fallback,
    shown: about.shown ?? fallback,
    flag: about.flag,
    describe: about.describe,
    allowed: 'a size: a number and KB, MB, GB, TB (or KiB, MiB, GiB, TiB)',
    parse(raw, name) {
      if (!SIZE.test(raw)) throw new InputError(`${name} must be a size such as 512MB or 2.5GB, ${got(raw)}`);
      return raw;
    },
  };
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** '250ms', '10s', '5m', '6h', '1d' → milliseconds. */
export function parseDuration(raw: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$/.exec(raw);
  if (!match) throw new InputError(`${name} must be a duration such as 500ms, 10s, 5m, 6h or 1d, got '${raw}'`);
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (!(ms > 0)) throw new InputError(`${name} must be more than 0, got '${raw}'`);
  return Math.round(ms);
}

const DURATION = 'a duration above 0: a number and ms, s, m, h or d';

/** A duration, in milliseconds. */
export function duration(fallback: string, about: About): Setting<number> {
  return {
    kind: 'duration',
    fallback: parseDuration(fallback, 'default'),
    shown: about.shown ?? fallback,
    flag: about.flag,
    describe: about.describe,
    allowed: DURATION,
    parse: parseDuration,
  };
}

/** Comma-separated durations (at most `most`), in milliseconds. */
export function durations(fallback: string, about: About & { most: number }): Setting<number[]> {
  const parse = (raw: string, name: string): number[] => {
    const steps = raw.split(',').map((part) => parseDuration(part, name));
    if (steps.length > about.most) throw new InputError(`${name} has more than ${about.most} retries`);
    return steps;
  };
  return {
    kind: 'durations',
    fallback: parse(fallback, 'default'),
    shown: about.shown ?? fallback,
    flag: about.flag,
    describe: about.describe,
    allowed: `up to ${about.most} durations, comma-separated`,
    parse,
  };
}

/** One of a few words. */
export function oneOf<const V extends string>(values: readonly V[], fallback: V, about: About): Setting<V> {
  return {
    kind: 'enum',
    fallback,
    shown: about.shown ?? fallback,
    flag: about.flag,
    describe: about.describe,
    allowed: values.join(', '),
    parse(raw, name) {
      if (!(values as readonly string[]).includes(raw))
        throw new InputError(`${name} must be one of ${values.join(', ')}, ${got(raw)}`);
      return raw as V;
    },
  };
}

/** On (1, true, yes) or off (0, false, no), any case. */
export function boolean(about: About): Setting<boolean> {
  return {
    kind: 'boolean',
    fallback: false,
    shown: about.shown ?? 'off',
    flag: about.flag,
    describe: about.describe,
    allowed: '1, true, yes (on); 0, false, no (off)',
    parse(raw, name) {
      const word = raw.trim().toLowerCase();
      if (['1', 'true', 'yes'].includes(word)) return true;
      if (['0', 'false', 'no'].includes(word)) return false;
      throw new InputError(`${name} must be one of 1, true, yes, 0, false, no, ${got(raw)}`);
    },
  };
}

/** On when set to anything at all: a switch for debugging (`DRIVING_DEBUG=1`). */
export function toggle(about: About): Setting<boolean> {
  return {
    kind: 'switch',
    fallback: false,
    shown: about.shown ?? 'off',
    flag: about.flag,
    describe: about.describe,
    allowed: 'any value: on',
    parse: () => true,
  };
}

/** Any text (a host name, a folder, a file); null when unset and no default. */
export function text<T extends string | null>(
  fallback: T,
  about: About & { kind?: 'string' | 'path' },
): Setting<string | T> {
  return {
    kind: about.kind ?? 'string',
    fallback,
    shown: about.shown ?? (fallback === null ? 'unset' : fallback),
    flag: about.flag,
    describe: about.describe,
    allowed: about.kind === 'path' ? 'a path' : 'text',
    parse: (raw) => raw,
  };
}

/** A URL of one of `schemes` (its text trimmed); null when unset. */
export function url(schemes: readonly string[], about: About): Setting<string | null> {
  return {
    kind: 'url',
    fallback: null,
    shown: about.shown ?? 'unset',
    flag: about.flag,
    describe: about.describe,
    allowed: `a URL: ${schemes.map((s) => `${s}://`).join(', ')}`,
    parse(raw, name) {
      const value = raw.trim();
      if (value === '') return null;
      let scheme: string;
      try {
        scheme = new URL(value).protocol.replace(/:$/, '');
      } catch {
        throw new InputError(`${name} must be a URL (${schemes.map((s) => `${s}://`).join(', ')}), ${got(raw)}`);
      }
      if (!schemes.includes(scheme))
        throw new InputError(`${name} must be a URL of ${schemes.map((s) => `${s}://`).join(', ')}, ${got(raw)}`);
      return value;
    },
  };
}
