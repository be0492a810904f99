import { addDays, todayIn } from '../../time.js';
import { instantOf } from './upload-check.js';

/** An accepted record that will not be served whole: said in the upload's 202 (`warnings[]`). */
export interface RouteRetentionWarning {
  warning: 'route_beyond_retention';
  retentionDays: number;
  detail: string;
}

/**
 * `route_beyond_retention` for an accepted record whose trip date (its start, in the app's zone) is
 * older than the raw points and routes are kept (DRIVING_POINTS_RETENTION_DAYS after the trip's
 * date, counted from the server's UTC day as the load prunes them, src/load/retention.ts): the
 * load takes the trip and the API serves it, but the publish writes no route for a date past
 * retention (src/warehouse/route-files.ts), so its route answers `route_not_available` from the start.
 * Judged at the upload's clock: a trip on the edge may pass it before the next load.
 * @example a trip that started 60 days before its upload, with 30 days kept: `warning` is
 * 'route_beyond_retention'; one that started yesterday: null.
 */
export async function routeRetentionWarning(
  record: Record<string, unknown>,
  zoneOf: () => Promise<string>,
  retentionDays: number | undefined,
  uploadedAt: Date,
): Promise<RouteRetentionWarning | null> {
  const start = instantOf(record['startTime']);
  if (start === null || retentionDays === undefined) return null;
  const today = todayIn('UTC', uploadedAt);
  const oldestKept = addDays(today, -retentionDays);
  // from noon UTC of that date on, every zone (UTC-12 the latest) is on it or later: most uploads
  // are judged without looking the app's zone up
  if (start >= Date.parse(`${oldestKept}T12:00:00Z`)) return null;
  const tripDate = todayIn(await zoneOf(), new Date(start));
  if (tripDate >= oldestKept) return null;
  return {
    warning: 'route_beyond_retention',
    retentionDays,
    detail:
      `the trip's date ${tripDate} (in the app's zone) is before ${oldestKept}, the oldest date whose points ` +
      `and routes are kept (${retentionDays} days before the server's date, ${today} UTC): the trip is served, ` +
      'its route never is (route_not_available)',
  };
}
