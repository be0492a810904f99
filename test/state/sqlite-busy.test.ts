// Opening the SQLite state store switches the file to WAL, which SQLite can refuse at once with
// SQLITE_BUSY while another process starts on the same file: the switch is tried again until the
// store's busy timeout (src/state/sqlite.ts). The retry's rule, with the errors given by hand.
import { describe, expect, it } from 'vitest';
import { retryWhileBusy } from '../../src/state/sqlite.js';

const sqliteError = (code: string): Error =>
  Object.assign(new Error(code === 'SQLITE_BUSY' ? 'database is locked' : code), { code });

/** A call that throws the given errors in turn, then answers 'wal'; counts its calls. */
function failing(...errors: Error[]): { calls: () => number; work: () => string } {
  let calls = 0;
  return {
    calls: () => calls,
    work: () => {
      const error = errors[calls++];
      if (error) throw error;
      return 'wal';
    },
  };
}

describe('retryWhileBusy', () => {
  it('tries a busy call again, waiting between tries, until it answers', () => {
    const call = failing(sqliteError('SQLITE_BUSY'), sqliteError('SQLITE_BUSY_RECOVERY'));
    const waits: number[] = [];
    expect(retryWhileBusy(call.work, 60_000, (ms) => waits.push(ms))).toBe('wal');
    expect(call.calls()).toBe(3);
    expect(waits).toEqual([25, 25]);
  });

  it('throws any other error at once', () => {
    const call = failing(sqliteError('SQLITE_CORRUPT'));
    const waits: number[] = [];
    expect(() => retryWhileBusy(call.work, 60_000, (ms) => waits.push(ms))).toThrow('SQLITE_CORRUPT');
    expect(call.calls()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('throws the busy error once its time is spent', () => {
    const call = failing(sqliteError('SQLITE_BUSY'), sqliteError('SQLITE_BUSY'));
    expect(() => retryWhileBusy(call.work, 0, () => undefined)).toThrow('database is locked');
    expect(call.calls()).toBe(1);
  });
});
