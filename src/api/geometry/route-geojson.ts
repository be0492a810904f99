import { randomUUID } from 'node:crypto';
import type { TripDetailRow, TripEventRow } from '../read/rows.js';
import type { RoutePoints } from '../../route/route-file.js';
import { round } from '../http/context.js';

type Position = [lng: number, lat: number];

/** What the route's Feature says of its trip. */
type RouteTrip = Pick<TripDetailRow, 'trip_id' | 'coordinate' | 'start_time' | 'end_time'>;

/**
 * The route as GeoJSON (RFC 7946, positions `[lng, lat]` as delivered): the points at the `kept`
 * indexes (those Douglas–Peucker keeps at `toleranceM` metres), with each one's time (epoch ms) and
 * speed (km/h) at the same index in `properties`. Two or more points make a LineString; one a
 * Point; none a null geometry (a Feature without a location).
 */
export function routeFeature(
  trip: RouteTrip,
  points: RoutePoints,
  kept: readonly number[],
  toleranceM: number,
): Record<string, unknown> {
  const coordinates = kept.map((i): Position => [points.lng[i] as number, points.lat[i] as number]);
  const geometry =
    coordinates.length >= 2
      ? { type: 'LineString', coordinates }
      : coordinates.length === 1
        ? { type: 'Point', coordinates: coordinates[0] }
        : null;
  return featureOf(
    trip,
    points,
    toleranceM,
    geometry,
    kept.map((i) => points.t[i] as number),
    kept.map((i) => speedKmh(points, i)),
  );
}

const speedKmh = (points: RoutePoints, i: number): number => round((points.speed[i] as number) * 3.6, 2);

function featureOf(
  trip: RouteTrip,
  points: RoutePoints,
  toleranceM: number,
  geometry: unknown,
  times: unknown,
  speedsInKmh: unknown,
): Record<string, unknown> {
  return {
    type: 'Feature',
    geometry,
    properties: {
      tripId: trip.trip_id,
      coordinate: trip.coordinate,
      startTime: trip.start_time,
      endTime: trip.end_time,
      tolerance: toleranceM,
      keptPointCount: points.t.length,
      times,
      speedsInKmh,
    },
  };
}

/** The trip's dangerous-driving events, each a Feature whose MultiPoint holds its start and end position. */
export function eventCollection(events: TripEventRow[]): Record<string, unknown> {
  const position = (lat: number, lng: number): Position => [lng, lat];
  return {
    type: 'FeatureCollection',
    features: events.map((e) => ({
      type: 'Feature',
      geometry: {
        type: 'MultiPoint',
        coordinates: [position(e.start_lat, e.start_lng), position(e.end_lat, e.end_lng)],
      },
      properties: {
        type: e.type,
        description: e.description,
        startTime: e.start_time,
        endTime: e.end_time,
      },
    })),
  };
}

/** What the answer holds besides the route: the identity fields first, then the route, then the events. */
export interface RouteAnswer {
  head: Record<string, unknown>;
  trip: RouteTrip;
  events: TripEventRow[];
}

/** The answer's JSON in one go (a route of a few thousand positions holds the event loop only briefly). */
export const routeJson = (a: RouteAnswer, points: RoutePoints, kept: readonly number[], toleranceM: number): string =>
  JSON.stringify({
    ...a.head,
    route: routeFeature(a.trip, points, kept, toleranceM),
    events: eventCollection(a.events),
  });

/**
 * Stands for an array in the skeleton that `routeJsonInChunks` writes: random per process, so no
 * delivered string (a tripId) can imitate it.
 */
const PLACEHOLDER = `\u0000${randomUUID()}`;
const QUOTED = JSON.stringify(PLACEHOLDER);

/**
 * The same JSON as `routeJson`, byte for byte, as UTF-8 pieces of `chunk` positions each, with
 * `pause()` between pieces, so that a 100,000-position route (several MB) is neither written nor
 * encoded in one go: the pieces are sent as they are, never joined into one string.
 * For two or more kept points (a LineString).
 */
export async function routeJsonInChunks(
  a: RouteAnswer,
  points: RoutePoints,
  kept: readonly number[],
  toleranceM: number,
  chunk: number,
  pause: () => Promise<void>,
): Promise<Buffer[]> {
  const feature = featureOf(
    a.trip,
    points,
    toleranceM,
    { type: 'LineString', coordinates: PLACEHOLDER },
    PLACEHOLDER,
    PLACEHOLDER,
  );
  const parts = JSON.stringify({ ...a.head, route: feature, events: eventCollection(a.events) }).split(QUOTED);
  if (parts.length !== 4) throw new Error('route JSON skeleton: placeholder not found three times');
  const columns: ((i: number) => unknown)[] = [
    (i) => [points.lng[i] as number, points.lat[i] as number],
    (i) => points.t[i] as number,
    (i) => speedKmh(points, i),
  ];
  const out: Buffer[] = [];
  let text = parts[0] as string;
  for (const [c, value] of columns.entries()) {
    text += '[';
    for (let from = 0; from < kept.length; from += chunk) {
      if (from > 0 || c > 0) await pause();
      // JSON.stringify of the slice, its brackets dropped: the same text the whole array gives
      text += `${from > 0 ? ',' : ''}${JSON.stringify(kept.slice(from, from + chunk).map(value)).slice(1, -1)}`;
      out.push(Buffer.from(text, 'utf8'));
      text = '';
    }
    text += `]${parts[c + 1] as string}`;
  }
  out.push(Buffer.from(text, 'utf8'));
  return out;
}
