import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sqlText } from '../../db/sql.js';
import type { TripDetailRow, TripEventRow } from '../read/rows.js';
import { readRoute, routeFile, type RoutePoints } from '../../route/route-file.js';
import { tripDetail, type Scope } from '../read/repository.js';
import type { Snapshot } from '../read/snapshot.js';

/** What the route is drawn from; `points` are valid only during the render call (src/route/route-file.ts, readRoute). */
export interface TripRoute {
  trip: TripDetailRow;
  events: TripEventRow[];
  points: RoutePoints;
}

const NO_POINTS: RoutePoints = {
  t: new Float64Array(0),
  lat: new Float64Array(0),
  lng: new Float64Array(0),
  speed: new Float64Array(0),
};

/** The versions that wrote route files for a date, newest first, per served version (the listing of one snapshot). */
const listings = new Map<string, Promise<number[]>>();
const MAX_LISTINGS = 512;

function versionsFor(routesDir: string, tripDate: string, servedVersion: number, fresh = false): Promise<number[]> {
  const key = `${routesDir}\u0000${tripDate}\u0000${servedVersion}`;
  let listing = fresh ? undefined : listings.get(key);
  if (!listing) {
    listing = readdir(join(routesDir, `trip_date=${tripDate}`)).then(
      (names) =>
        names
          .map((n) => /^v(\d+)\.route$/.exec(n)?.[1])
          .filter((v): v is string => v !== undefined)
          .map(Number)
          // a file newer than the served snapshot belongs to a publish the API has not switched to
          .filter((v) => v <= servedVersion)
          .sort((a, b) => b - a),
      () => [],
    );
    if (listings.size >= MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    listings.set(key, listing);
  }
  return listing;
}

/**
 * The served trip rendered with its kept points, read from the route file its version wrote for
 * its date (src/warehouse/route-files.ts): null when the user has no such trip, 'expired' when the file
 * is gone (raw points kept only DRIVING_POINTS_RETENTION_DAYS days) or was never written. A file
 * that does not list the trip means the trip kept no point.
 * The trip and its events come from the serving pack; its file is found without SQL: the trip's
 * date is its local start day (trip_date is the start's day in the app's zone), and of that date's
 * files the newest one the served snapshot knows that lists the trip holds its current copy (a
 * re-sent trip is written again by a newer version). Only when none lists it (the app's zone
 * changed since the trip was loaded) does the slot say where it is.
 * `render` runs synchronously right after the read: the points live in a buffer the next read reuses.
 */
export async function tripRoute<T>(
  s: Snapshot,
  scope: Scope,
  tripId: string,
  routesDir: string,
  render: (route: TripRoute) => T,
): Promise<T | null | 'expired'> {
  const found = await tripDetail(s, scope, tripId);
  if (!found) return null;
  const localDate = found.trip.start_time.slice(0, 10);
  for (const version of await versionsFor(routesDir, localDate, s.manifest.version)) {
    const points = readRoute(routeFile(routesDir, localDate, version), scope.appId, tripId);
    if (points) return render({ ...found, points });
  }
  const [key] = await s.query(sqlText('ops/api/trip_route_key'), {
    app_id: scope.appId,
    user_id: scope.userId,
    trip_id: tripId,
  });
  if (!key) return null;
  const keyDate = String(key['trip_date']);
  const keyVersion = Number(key['version']);
  let points = readRoute(routeFile(routesDir, keyDate, keyVersion), scope.appId, tripId);
  // merged into a newer file of its date (src/compact/routes.ts): the oldest such file holds this copy
  if (points === undefined)
    for (const version of [...(await versionsFor(routesDir, keyDate, s.manifest.version, true))].reverse()) {
      if (version < keyVersion) continue;
      points = readRoute(routeFile(routesDir, keyDate, version), scope.appId, tripId);
      if (points !== undefined) break;
    }
  if (points === undefined) return 'expired';
  return render({ ...found, points: points ?? NO_POINTS });
}
