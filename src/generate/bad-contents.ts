import type { TripEvent, TripPoint, TripRecord } from './types.js';

export interface SpoiledTrip {
  record: TripRecord;
  droppedPointsByReason: Record<string, number>;
  quarantinedEventsByReason: Record<string, number>;
}

interface Insert {
  after: number;
  point: TripPoint;
  reason: string;
}

/**
 * Adds points the loader must drop and events it must quarantine to a normal trip (ISO times,
 * at least ten 1 Hz points), each bad in exactly one way; the trip's own points and events stay.
 *
 * @example const { record, droppedPointsByReason } = spoilTrip(trip);
 */
export function spoilTrip(trip: TripRecord): SpoiledTrip {
  const points = trip.points;
  const n = points.length;
  if (n < 10) throw new Error(`trip ${trip.tripId} is too short to carry bad points`);
  const startMs = Date.parse(String(trip.startTime));
  const endMs = Date.parse(String(trip.endTime));
  const index = (share: number): number => Math.floor(n * share);
  const at = (share: number): TripPoint => points[index(share)] as TripPoint;
  // Bad points sit half a second after a good one, so no time is shared with a kept point.
  const beside = (share: number, change: Partial<TripPoint>, reason: string): Insert => ({
    after: index(share),
    point: { ...at(share), t: Number(at(share).t) + 500, ...change },
    reason,
  });
  const inserts: Insert[] = [
    beside(0.1, { lat: null }, 'non_finite'),
    beside(0.2, { speed: 'fast' }, 'non_finite'),
    beside(0.3, { t: null }, 'non_finite'),
    beside(0.4, { lat: 91.5 }, 'invalid_position'),
    beside(0.5, { lng: -181.25 }, 'invalid_position'),
    beside(0.6, { speed: -2.5 }, 'negative_speed'),
    { after: -1, point: { ...at(0), t: startMs - 90_000 }, reason: 'time_out_of_range' },
    { after: n - 1, point: { ...at(0.99), t: endMs + 120_000 }, reason: 'time_out_of_range' },
    { after: index(0.7), point: { ...at(0.7) }, reason: 'duplicate_time' },
    { after: index(0.8), point: { ...at(0.8), speed: Number(at(0.8).speed) + 1.5 }, reason: 'duplicate_time' },
  ];

  const spoiledPoints: TripPoint[] = [];
  for (let i = -1; i < n; i++) {
    if (i >= 0) spoiledPoints.push(points[i] as TripPoint);
    for (const insert of inserts) if (insert.after === i) spoiledPoints.push(insert.point);
  }

  const first = points[0] as TripPoint;
  const last = points[n - 1] as TripPoint;
  const event = (type: string, from: string, to: string): TripEvent => ({
    type,
    startTime: from,
    endTime: to,
    startPoint: { lat: Number(first.lat), lng: Number(first.lng) },
    endPoint: { lat: Number(last.lat), lng: Number(last.lng) },
    description: `Test event: ${type}`,
  });
  const start = String(trip.startTime);
  const end = String(trip.endTime);
  const { startTime: _missingStart, ...withoutStart } = event('speeding', start, end);
  const { endPoint: _missingEnd, ...withoutEndPoint } = event('brake', start, end);
  const badEvents: Array<[TripEvent, string]> = [
    [event('drifting', start, end), 'unknown_event_type'],
    [event('wheelie', start, end), 'unknown_event_type'],
    [event('brake', end, start), 'event_time_inverted'],
    [event('phone_call', end, start), 'event_time_inverted'],
    [withoutStart, 'invalid_event'],
    [withoutEndPoint, 'invalid_event'],
  ];

  return {
    record: { ...trip, points: spoiledPoints, events: [...trip.events, ...badEvents.map(([e]) => e)] },
    droppedPointsByReason: countBy(inserts.map((i) => i.reason)),
    quarantinedEventsByReason: countBy(badEvents.map(([, reason]) => reason)),
  };
}

export function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}
