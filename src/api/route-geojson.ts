import type { Row } from '../db/sql.js';
import type { RoutePoints } from '../route/route-file.js';
import { simplifyIndexes } from '../geo/douglas-peucker.js';
import { round } from './context.js';

type Position = [lng: number, lat: number];

/**
 * The route as GeoJSON (RFC 7946, positions `[lng, lat]` as delivered): the kept points that
 * Douglas–Peucker keeps at `toleranceM` metres, with each one's time (epoch ms) and speed (km/h)
 * at the same index in `properties`. Two or more points make a LineString; one a Point; none a
 * null geometry (a Feature without a location).
 */
export function routeFeature(trip: Row, points: RoutePoints, toleranceM: number): Record<string, unknown> {
  const kept = simplifyIndexes(points.lat, points.lng, toleranceM);
  const coordinates = kept.map((i): Position => [points.lng[i] as number, points.lat[i] as number]);
  const geometry = coordinates.length >= 2 ? { type: 'LineString', coordinates }
    : coordinates.length === 1 ? { type: 'Point', coordinates: coordinates[0] } : null;
  return {
    type: 'Feature',
    geometry,
    properties: {
      tripId: trip['trip_id'],
      coordinate: trip['coordinate'],
      startTime: trip['start_time'],
      endTime: trip['end_time'],
      tolerance: toleranceM,
      keptPointCount: points.t.length,
      times: kept.map((i) => points.t[i] as number),
      speedsInKmh: kept.map((i) => round((points.speed[i] as number) * 3.6, 2)),
    },
  };
}

/** The trip's dangerous-driving events, each a Feature whose MultiPoint holds its start and end position. */
export function eventCollection(events: Row[]): Record<string, unknown> {
  const position = (lat: unknown, lng: unknown): Position => [Number(lng), Number(lat)];
  return {
    type: 'FeatureCollection',
    features: events.map((e) => ({
      type: 'Feature',
      geometry: { type: 'MultiPoint', coordinates: [position(e['start_lat'], e['start_lng']), position(e['end_lat'], e['end_lng'])] },
      properties: { type: e['type'], description: e['description'], startTime: e['start_time'], endTime: e['end_time'] },
    })),
  };
}
