import { describe, expect, it } from 'vitest';
import { parseQueryDate, parseQueryTime } from '../../src/api/http/query-time.js';
import { ApiError } from '../../src/api/http/errors.js';
import { Directory } from '../../src/serving/directory.js';
import { EVENT_FIELDS, SCORE_FIELDS, TRIP_FIELDS } from '../../src/serving/format.js';
import { eventRow, scoreRow, tripRow } from '../../src/serving/pack.js';
import { sqlText } from '../../src/db/sql.js';

describe('stored arrays to rows', () => {
  it('names a trip array by TRIP_FIELDS, in order', () => {
    expect(Object.entries(tripRow(TRIP_FIELDS.map((_, k) => k)))).toEqual(TRIP_FIELDS.map((f, k) => [f, k]));
  });
  it('names an event array by EVENT_FIELDS, in order', () => {
    expect(Object.entries(eventRow(EVENT_FIELDS.map((_, k) => k)))).toEqual(EVENT_FIELDS.map((f, k) => [f, k]));
  });
  it('names a score array by SCORE_FIELDS, the columns models/serving/api_safety_score.sql and its history answer with, in their order', () => {
    expect(Object.entries(scoreRow(SCORE_FIELDS.map((_, k) => k)))).toEqual(SCORE_FIELDS.map((f, k) => [f, k]));
    for (const file of ['models/serving/api_safety_score', 'models/serving/api_safety_score_history']) {
      const select = sqlText(file)
        .split('\n')
        .filter((l) => !l.startsWith('--'))
        .join(' ');
      let list = select.slice(select.indexOf('select') + 6, select.indexOf(' from '));
      // calls' arguments out (innermost first), so the commas left separate the columns
      while (/\([^()]*\)/.test(list)) list = list.replace(/\([^()]*\)/g, '');
      const names = list.split(',').map((c) =>
        c
          .trim()
          .split(/\s+as\s+/)
          .pop()
          ?.trim(),
      );
      expect(names, file).toEqual([...SCORE_FIELDS]);
    }
  });
});

describe('Directory', () => {
  // a second, plain implementation: a Map over the same tuples
  const apps = 3;
  const tuples: number[][] = [];
  let seed = 7;
  const rnd = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };
  const used = new Set<string>();
  while (tuples.length < 500) {
    const t = [rnd(apps - 1), rnd(10_000) * 1_000_003, rnd(1_000_000), 1 + rnd(50)]; // app 2 has no users
    if (used.has(`${t[0]}:${t[1]}`)) continue;
    used.add(`${t[0]}:${t[1]}`);
    tuples.push(t);
  }
  const dir = new Directory(apps, tuples.flat(), 4);

  it('finds every tuple, unsorted as given, with its fields', () => {
    expect(dir.size).toBe(500);
    for (const [app, user, first, count] of tuples) {
      const row = dir.find(app as number, user as number);
      expect(row).toBeGreaterThanOrEqual(0);
      expect([dir.field(row, 0), dir.field(row, 1)]).toEqual([first, count]);
    }
  });

  it('misses users it does not hold, an app without users and apps out of range', () => {
    for (let k = 0; k < 200; k++) {
      const app = rnd(apps);
      const user = rnd(10_000) * 1_000_003 + 1;
      expect(dir.find(app, user)).toBe(-1);
    }
    expect(dir.find(2, tuples[0]?.[1] as number)).toBe(-1);
    expect(dir.find(-1, 0)).toBe(-1);
    expect(dir.find(apps, 0)).toBe(-1);
  });

  it("lists an app's users ascending", () => {
    for (let app = 0; app < apps; app++) {
      expect(dir.usersOf(app)).toEqual(
        tuples
          .filter((t) => t[0] === app)
          .map((t) => t[1])
          .sort((x, y) => (x as number) - (y as number)),
      );
    }
    expect(dir.usersOf(7)).toEqual([]);
  });

  it('holds purge marks (two fields a tuple)', () => {
    const purged = new Directory(2, [1, 42, 0, 7, 1, 5], 2);
    expect([purged.find(1, 42), purged.find(1, 5), purged.find(0, 7), purged.find(0, 42)].map((r) => r >= 0)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(purged.usersOf(1)).toEqual([5, 42]);
  });
});

describe('query dates and times', () => {
  it('accepts real calendar days only', () => {
    expect(parseQueryDate('startTime', '2024-02-29')).toBe('2024-02-29');
    expect(parseQueryDate('startTime', '1999-12-31')).toBe('1999-12-31');
    for (const bad of [
      '2023-02-29',
      '2026-02-30',
      '2026-13-01',
      '2026-04-31',
      '2026-00-10',
      '2026-1-01',
      'yesterday',
    ]) {
      expect(() => parseQueryDate('startTime', bad), bad).toThrow(ApiError);
    }
  });

  it('answers a remembered time as it answered the first time, per zone and bound', () => {
    const berlin = parseQueryTime('startTime', '2026-03-29', 'Europe/Berlin', 'start');
    expect(berlin.toISOString()).toBe('2026-03-28T23:00:00.000Z');
    berlin.setTime(0); // a caller changing its Date does not change the remembered answer
    expect(parseQueryTime('startTime', '2026-03-29', 'Europe/Berlin', 'start').toISOString()).toBe(
      '2026-03-28T23:00:00.000Z',
    );
    // the DST day is 23 hours long: its exclusive end
    expect(parseQueryTime('endTime', '2026-03-29', 'Europe/Berlin', 'end').toISOString()).toBe(
      '2026-03-29T22:00:00.000Z',
    );
    expect(parseQueryTime('startTime', '2026-03-29', 'America/New_York', 'start').toISOString()).toBe(
      '2026-03-29T04:00:00.000Z',
    );
    expect(() => parseQueryTime('startTime', '2026-02-30 10:00:00', 'Europe/Berlin', 'start')).toThrow(/startTime/);
    expect(() => parseQueryTime('startTime', '2026-02-30 10:00:00', 'Europe/Berlin', 'start')).toThrow(/startTime/);
  });
});
