// src/time.ts's dates and zones, computed with Intl and Date, against luxon's answers (a second,
// independent implementation) around the edges: leap days, month and year ends, zones far east and
// west of UTC at instants either side of their midnight, DST switches.
import { describe, expect, it } from 'vitest';
import { DateTime, IANAZone } from 'luxon';
import { addDays, datesBetween, isDate, isValidZone, todayIn } from '../../src/time.js';

const luxonIsDate = (v: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(v) && DateTime.fromISO(v, { zone: 'UTC' }).isValid;

describe('calendar dates and zones', () => {
  it('validates dates as luxon does', () => {
    const values = [
      '2026-11-26',
      '2024-02-29',
      '2023-02-29',
      '2000-02-29',
      '2100-02-29',
      '2026-04-31',
      '2026-12-31',
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
      '0001-01-01',
      '9999-12-31',
      '2026-1-01',
      '26-11-26',
      '2026-11-26T00:00',
      ' 2026-11-26',
      '',
      'yesterday',
    ];
    for (const v of values) expect(isDate(v), v).toBe(luxonIsDate(v));
  });

  it('adds days and lists dates as luxon does', () => {
    for (const [date, days] of [
      ['2026-11-26', 1],
      ['2026-12-31', 1],
      ['2024-02-28', 1],
      ['2023-02-28', 1],
      ['2026-03-01', -1],
      ['2026-01-01', -1],
      ['2026-11-26', -90],
      ['2026-11-26', 366],
      ['2026-03-08', 1],
      ['2026-10-25', 0],
    ] as const) {
      expect(addDays(date, days), `${date} ${days}`).toBe(
        DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate(),
      );
    }
    expect(datesBetween('2024-02-27', '2024-03-02')).toEqual([
      '2024-02-27',
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
      '2024-03-02',
    ]);
    expect(datesBetween('2026-12-30', '2027-01-01')).toEqual(['2026-12-30', '2026-12-31', '2027-01-01']);
    expect(datesBetween('2026-11-26', '2026-11-26')).toEqual(['2026-11-26']);
    expect(datesBetween('2026-11-27', '2026-11-26')).toEqual([]);
  });

  it("gives today's date in a zone as luxon does, either side of the zone's midnight", () => {
    const zones = [
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'America/Los_Angeles',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
      'Asia/Kolkata',
      'Australia/Lord_Howe',
    ];
    const instants = [
      '2026-11-26T00:00:00Z',
      '2026-11-25T23:59:59.999Z',
      '2026-03-08T06:59:59Z',
      '2026-03-08T07:00:00Z',
      '2026-03-29T00:30:00Z',
      '2026-10-25T00:30:00Z',
      '2026-11-01T05:30:00Z',
      '2026-12-31T10:00:00Z',
      '2026-12-31T09:59:59Z',
      '2024-02-29T12:00:00Z',
    ];
    for (const zone of zones) {
      for (const at of instants) {
        const now = new Date(at);
        expect(todayIn(zone, now), `${zone} ${at}`).toBe(DateTime.fromJSDate(now, { zone }).toISODate());
      }
    }
  });

  it('knows the zones luxon knows', () => {
    for (const zone of [
      'UTC',
      'Etc/UTC',
      'utc',
      'Europe/Berlin',
      'america/new_york',
      'Etc/GMT+5',
      'Mars/Olympus',
      'Europe/Berlin ',
      'GMT+25',
      '',
      'Not a zone',
    ]) {
      expect(isValidZone(zone), zone).toBe(IANAZone.isValidZone(zone));
    }
  });
});
