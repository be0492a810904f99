import { sqlText, type Row } from '../db/sql.js';
import { readRoute, routeFile, type RoutePoints } from '../route/route-file.js';
import { tripDetail, type Scope } from './repository.js';
import type { Snapshot } from './snapshot.js';

export interface TripRoute {
  trip: Row;
  events: Row[];
  points: RoutePoints;
}

const NO_POINTS: RoutePoints = { t: new Float64Array(0), lat: new Float64Array(0), lng: new Float64Array(0), speed: new Float64Array(0) };

/**
 * The served trip with its kept points, read from the route file its version wrote for its date
 * (src/publish/routes.ts): null when the user has no such trip, 'expired' when the file is gone
 * (raw points kept only DRIVING_POINTS_RETENTION_DAYS days) or was never written. A file that
 * does not list the trip means the trip kept no point.
 */
export async function tripRoute(s: Snapshot, scope: Scope, tripId: string, routesDir: string): Promise<TripRoute | null | 'expired'> {
  const found = await tripDetail(s, scope, tripId);
  if (!found) return null;
  const [key] = await s.query(sqlText('api/trip_route_key'), { app_id: scope.appId, user_id: scope.userId, trip_id: tripId });
  if (!key) return null;
  const points = await readRoute(routeFile(routesDir, String(key['trip_date']), String(key['version'])), scope.appId, tripId);
  if (points === undefined) return 'expired';
  return { ...found, points: points ?? NO_POINTS };
}
