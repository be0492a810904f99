import type { ApiContext } from '../http/context.js';
import { routeRetentionWarning, type RouteRetentionWarning } from './route-retention.js';

/**
 * The 202's `warnings[]`: accepted records that will not be served whole, by their index in the
 * upload (src/api/upload/route-retention.ts). The app's zone is looked up once, and only when a
 * record is old enough to need it.
 */
export async function uploadWarnings(
  ctx: Pick<ApiContext, 'apps' | 'pointsRetentionDays'>,
  appId: string,
  accepted: { index: number; record: Record<string, unknown> }[],
  uploadedAt: Date,
): Promise<({ index: number; tripId?: string } & RouteRetentionWarning)[]> {
  let zone: Promise<string> | undefined;
  // a store that cannot be read costs the warning a day's precision, never the upload
  const zoneOf = () =>
    (zone ??= ctx.apps.byId(appId).then(
      (app) => app?.timeZone ?? 'UTC',
      () => 'UTC',
    ));
  const warnings: ({ index: number; tripId?: string } & RouteRetentionWarning)[] = [];
  for (const { index, record } of accepted) {
    const warning = await routeRetentionWarning(record, zoneOf, ctx.pointsRetentionDays, uploadedAt);
    const tripId = record['tripId'];
    if (warning) warnings.push({ index, ...(typeof tripId === 'string' ? { tripId } : {}), ...warning });
  }
  return warnings;
}
