import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS, flagOrSetting, setting, settingsTable } from '../../src/settings.js';
import { jobSettings } from '../../src/job-settings.js';

/** Every .ts file under dir. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

// what may name process.env outside src/settings.ts, and why
const ALLOWED = [
  // the system's search path for pg_dump, not a setting of the service
  { file: 'src/backup/state-store.ts', text: "process.env['PATH']" },
  // a receiver's own code, in the doc comment of its example
  { file: 'src/webhooks/signature.ts', text: 'process.env.APP_SECRET' },
];

describe('one place reads the settings', () => {
  it('is src/settings.ts: nothing else under src/ reads process.env', () => {
    const found = sources('src')
      .filter((file) => file !== join('src', 'settings.ts'))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ file, line, at: `${file}:${i + 1}` })),
      )
      .filter(
        ({ file, line }) =>
          /process\s*\.\s*env|process\[['"]env['"]\]/.test(line) &&
          !ALLOWED.some((a) => a.file === file && line.includes(a.text)),
      )
      .map(({ at, line }) => `${at}: ${line.trim()}`);
    expect(found).toEqual([]);
  });

  it('lists in docs/configuration.md exactly the settings it declares, as it declares them', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const documented = [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
    // every setting documented, no row for one that is gone
    expect(documented).toEqual(Object.keys(SETTINGS));
    // and each row as the code has it (node tools/configuration-doc.js rewrites the table)
    expect(doc).toContain(settingsTable());
  });
});

describe('reading a setting', () => {
  it('takes the default when unset or empty', () => {
    expect(setting('DRIVING_MEMORY_LIMIT', {})).toBe('2.5GB');
    expect(setting('DRIVING_MEMORY_LIMIT', { DRIVING_MEMORY_LIMIT: '' })).toBe('2.5GB');
    expect(setting('DRIVING_DATA_DIR', {})).toBe('data');
    expect(setting('DATABASE_URL', {})).toBeNull();
    expect(setting('DRIVING_API_WORKERS', {})).toBeNull();
    expect(jobSettings({})).toEqual({
      pointsRetentionDays: 30,
      memoryLimit: '2.5GB',
      loadConcurrency: 2,
      publishLockWaitMs: 30_000,
      warehouseLockWaitMs: 60_000,
      pointsPerPart: 8_000_000,
      uploadBatchBytes: 128 * 2 ** 20,
      sliceBytes: 32 * 2 ** 20,
    });
  });

  it('reads the value anew when the variable changes, as a test that sets it per process expects', () => {
    expect(setting('DRIVING_LOAD_CONCURRENCY', { DRIVING_LOAD_CONCURRENCY: '3' })).toBe(3);
    expect(setting('DRIVING_LOAD_CONCURRENCY', { DRIVING_LOAD_CONCURRENCY: '5' })).toBe(5);
    // a 0 has always counted as 1 here
    expect(setting('DRIVING_LOAD_CONCURRENCY', { DRIVING_LOAD_CONCURRENCY: '0' })).toBe(1);
  });

  it('refuses a value that is not allowed, naming the variable, the value and what is allowed', () => {
    expect(() => setting('DRIVING_API_SERVING', { DRIVING_API_SERVING: 'fast' })).toThrow(
      "DRIVING_API_SERVING must be one of pack, sql, got 'fast'",
    );
    expect(() => setting('DRIVING_PACK_WARM', { DRIVING_PACK_WARM: 'some' })).toThrow(
      "DRIVING_PACK_WARM must be one of rows, all, none, got 'some'",
    );
    expect(() => setting('DRIVING_POINTS_RETENTION_DAYS', { DRIVING_POINTS_RETENTION_DAYS: '1.5' })).toThrow(
      "DRIVING_POINTS_RETENTION_DAYS must be a non-negative integer, got '1.5'",
    );
    expect(() => setting('PORT', { PORT: '70000' })).toThrow("PORT must be at most 65535, got '70000'");
    expect(() => setting('DRIVING_WEBHOOK_LEASE_MS', { DRIVING_WEBHOOK_LEASE_MS: '100' })).toThrow(
      "DRIVING_WEBHOOK_LEASE_MS must be at least 200, got '100'",
    );
    expect(() => setting('DRIVING_MEMORY_LIMIT', { DRIVING_MEMORY_LIMIT: 'lots' })).toThrow(
      "DRIVING_MEMORY_LIMIT must be a size such as 512MB or 2.5GB, got 'lots'",
    );
    expect(() => setting('DRIVING_WEBHOOK_POLL', { DRIVING_WEBHOOK_POLL: '1w' })).toThrow(
      "DRIVING_WEBHOOK_POLL must be a duration such as 500ms, 10s, 5m, 6h or 1d, got '1w'",
    );
    expect(() => setting('DRIVING_WEBHOOK_ALLOW_LOOPBACK', { DRIVING_WEBHOOK_ALLOW_LOOPBACK: 'maybe' })).toThrow(
      'DRIVING_WEBHOOK_ALLOW_LOOPBACK must be one of 1, true, yes, 0, false, no',
    );
    expect(() => setting('DATABASE_URL', { DATABASE_URL: 'mysql://db/x' })).toThrow(
      /DATABASE_URL must be a URL of postgres:\/\/, postgresql:\/\//,
    );
    expect(() => setting('DRIVING_REDIS_URL', { DRIVING_REDIS_URL: 'not a url' })).toThrow(
      /DRIVING_REDIS_URL must be a URL/,
    );
  });

  it('reads sizes, durations, switches and URLs', () => {
    expect(setting('DRIVING_API_MEMORY_LIMIT', { DRIVING_API_MEMORY_LIMIT: '1.5GiB' })).toBe('1.5GiB');
    expect(setting('DRIVING_WEBHOOK_TIMEOUT', { DRIVING_WEBHOOK_TIMEOUT: '250ms' })).toBe(250);
    expect(setting('DRIVING_WEBHOOK_SCHEDULE', {})).toEqual([
      60_000, 300_000, 1_200_000, 3_600_000, 21_600_000, 86_400_000,
    ]);
    expect(setting('DRIVING_WEBHOOK_ALLOW_LOOPBACK', { DRIVING_WEBHOOK_ALLOW_LOOPBACK: 'Yes' })).toBe(true);
    expect(setting('DRIVING_WEBHOOK_ALLOW_LOOPBACK', { DRIVING_WEBHOOK_ALLOW_LOOPBACK: '0' })).toBe(false);
    // a debugging switch is on when set at all
    expect(setting('DRIVING_DEBUG', { DRIVING_DEBUG: '0' })).toBe(true);
    expect(setting('DATABASE_URL', { DATABASE_URL: ' postgres://u@h/db ' })).toBe('postgres://u@h/db');
  });

  it('takes a flag over the variable, checked the same way and named by the flag', () => {
    const env = { DATABASE_URL: 'postgres://env/db' };
    expect(flagOrSetting(undefined, 'DATABASE_URL', env)).toBe('postgres://env/db');
    expect(flagOrSetting('postgres://flag/db', 'DATABASE_URL', env)).toBe('postgres://flag/db');
    expect(flagOrSetting('', 'DATABASE_URL', env)).toBeNull();
    expect(() => flagOrSetting('localhost', 'DATABASE_URL', env)).toThrow(
      "--database-url must be a URL (postgres://, postgresql://), got 'localhost'",
    );
  });
});
