// The watch stage's uploads: each a new trip of its driver, moved whole (start, end, points,
// events) to a slot no other upload of the driver takes, so that none is an overlapping trip.
import { describe, expect, it } from 'vitest';
import { UploadMaker, cutTrip, quantile } from '../../bench/watch-uploads.js';
import type { TripRecord } from '../../src/generate/types.js';

const START = Date.parse('2026-11-20T08:00:00Z');

function trip(id: string, points: number): TripRecord {
  return {
    tripId: id,
    os: 'ios',
    startTime: '2026-11-20T09:00:00+01:00',
    endTime: new Date(START + (points - 1) * 1000).toISOString(),
    points: Array.from({ length: points }, (_, i) => ({ t: START + i * 1000, lat: 52.5, lng: 13.4, speed: 10 })),
    events: [
      {
        type: 'harsh_braking',
        startTime: new Date(START + 30_000).toISOString(),
        endTime: new Date(START + 31_000).toISOString(),
      },
    ],
  };
}

describe('watch uploads', () => {
  it("gives every upload a new tripId and moves the whole trip to its driver's next free slot", () => {
    const day = Date.parse('2026-11-21T00:00:00Z');
    const maker = new UploadMaker(day, 'w');
    const uploads = Array.from({ length: 4 }, () => maker.make([trip('a', 120)], ['d1', 'd2']));
    expect(uploads.map((u) => [u.orgUserId, u.tripId])).toEqual([
      ['d1', 'w-1'],
      ['d2', 'w-2'],
      ['d1', 'w-3'],
      ['d2', 'w-4'],
    ]);
    const records = uploads.map((u) => JSON.parse(u.body) as TripRecord);
    const first = records[0] as TripRecord;
    expect(Date.parse(first.startTime as string)).toBe(day);
    expect(first.points[0]?.t).toBe(day);
    expect(Date.parse(first.events[0]?.startTime as string)).toBe(day + 30_000);
    // the driver's second trip starts after the first ended, with a gap
    const third = records[2] as TripRecord;
    expect(Date.parse(third.startTime as string)).toBeGreaterThan(Date.parse(first.endTime as string));
  });

  it('cuts a trip to its first points, its end and events with it', () => {
    const cut = cutTrip(trip('a', 100), 20);
    expect(cut.points).toHaveLength(20);
    expect(Date.parse(cut.endTime as string)).toBe(START + 19_000);
    expect(cut.events).toHaveLength(0);
    expect(cutTrip(trip('a', 100), 40).events).toHaveLength(1);
    expect(cutTrip(trip('a', 100), 40, false).events).toHaveLength(0);
  });

  it('takes quantiles by nearest rank', () => {
    expect(quantile([], 0.5)).toBeNull();
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(100);
  });
});
