import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { createHash } from 'node:crypto';
import { type ApiContext, onSnapshot, point, round, scopeFor } from '../http/context.js';
import { ApiError, invalid } from '../http/errors.js';
import { parseQueryTime } from '../http/query-time.js';
import { tripDetail, tripPage } from '../read/repository.js';
import { errorResponses, identity, OrgUserParams, TripBrief, TripDetail } from '../openapi/schemas.js';
import type { TripFieldsRow } from '../read/rows.js';
import { pageCost } from '../http/cost.js';

const FAR_PAST = new Date('1970-01-01T00:00:00Z');
const FAR_FUTURE = new Date('9999-12-31T23:59:59Z');
const FIRST_PAGE = { afterUs: '9223372036854775807', afterTrip: '' };

/** A trip row as the trip list serves it (the bulk export serves the same fields). */
export const brief = (r: TripFieldsRow) => ({
  tripId: r.trip_id,
  deviceId: r.device_id,
  status: r.status,
  eventCount: r.count_events,
  score: round(r.score, 2),
  energy: r.energy_g,
  mileageInMeters: r.mileage_m,
  durationInSeconds: r.duration_s,
  startTime: r.start_time,
  endTime: r.end_time,
  startPoint: point(r.start_lat, r.start_lng),
  endPoint: point(r.end_lat, r.end_lng),
  ...(r.start_poi == null ? {} : { startPoi: r.start_poi }),
  ...(r.end_poi == null ? {} : { endPoi: r.end_poi }),
});

/** The trip list's query. */
const TripListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    nextCursor: {
      type: 'string',
      maxLength: 1000,
      description: 'The nextCursor of the previous page, exactly as it was returned',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'Trips per page, 1 to 100, a plain decimal integer',
    },
    startTime: {
      type: 'string',
      maxLength: 40,
      description:
        "Earliest trip start: YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS' in the app's zone, or ISO 8601 with an offset within ±14:00",
    },
    endTime: {
      type: 'string',
      maxLength: 40,
      description: 'Latest trip start, inclusive (a date means its whole day); the same forms as startTime',
    },
  },
} as const;

/** A trip's path: the user and the trip. */
const TripParams = {
  type: 'object',
  required: ['org_user_id', 'trip_id'],
  properties: { ...OrgUserParams.properties, trip_id: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

/** Operations 1 and 2: trip list (keyset paging, newest first) and trip detail with events. */
export function tripRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Params: FromSchema<typeof OrgUserParams>; Querystring: FromSchema<typeof TripListQuery> }>(
    '/v1/org-user/:org_user_id/trips',
    {
      // one unit per 20 trips of the page: 1 by default, 5 for 100
      config: { cost: pageCost(20, 20) },
      schema: {
        operationId: 'listTrips',
        tags: ['Trips'],
        summary: 'List trips, newest first',
        description:
          'Keyset paging: pass the nextCursor of a page, byte for byte, to get the next one (any change is a 400); it is absent on the last page. ' +
          'startTime and endTime bound the trip start, both inclusive.',
        params: OrgUserParams,
        querystring: TripListQuery,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'trips'],
            properties: { ...identity, nextCursor: { type: 'string' }, trips: { type: 'array', items: TripBrief } },
            examples: [
              {
                appId: 'app_0123456789abcdef',
                userId: 4503599627370497,
                orgUserId: 'driver-1',
                nextCursor: 'WyIxNzYyMDg...In0.8mC3...',
                trips: [
                  {
                    tripId: 'trip-1',
                    deviceId: 'device-1',
                    status: 'normal',
                    eventCount: 1,
                    score: 96.5,
                    energy: 1830,
                    mileageInMeters: 12400,
                    durationInSeconds: 1260,
                    startTime: '2026-11-02 08:00:00',
                    endTime: '2026-11-02 08:21:00',
                    startPoint: { lng: 13.4, lat: 52.5 },
                    endPoint: { lng: 13.47, lat: 52.52 },
                  },
                ],
              },
            ],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const zone = request.tenant.timeZone;
      const from = q.startTime ? parseQueryTime('startTime', q.startTime, zone, 'start') : FAR_PAST;
      const to = q.endTime ? parseQueryTime('endTime', q.endTime, zone, 'end') : FAR_FUTURE;
      if (to <= from) throw invalid('endTime', 'must not be before startTime');
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const filters = createHash('sha256')
        .update(JSON.stringify([scope.appId, scope.userId, from.toISOString(), to.toISOString()]))
        .digest('base64url');
      const after = q.nextCursor
        ? ctx.cursors.decode(q.nextCursor, filters)
        : { startedUs: FIRST_PAGE.afterUs, tripId: FIRST_PAGE.afterTrip };
      const limit = q.limit ?? 20;
      const rows = await onSnapshot(
        ctx,
        (s) => tripPage(s, scope, { from, to, afterUs: after.startedUs, afterTrip: after.tripId, limit: limit + 1 }),
        scope,
      );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor =
        rows.length > limit && last
          ? ctx.cursors.encode({ startedUs: last.started_us, tripId: last.trip_id }, filters)
          : undefined;
      return {
        appId: scope.appId,
        userId: scope.userId,
        orgUserId: scope.orgUserId,
        ...(nextCursor ? { nextCursor } : {}),
        trips: page.map(brief),
      };
    },
  );

  app.get<{ Params: FromSchema<typeof TripParams> }>(
    '/v1/org-user/:org_user_id/trip/:trip_id',
    {
      schema: {
        summary: 'One trip with its dangerous-driving events',
        params: TripParams,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'trip'],
            properties: { ...identity, trip: TripDetail },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const found = await onSnapshot(ctx, (s) => tripDetail(s, scope, request.params.trip_id), scope);
      if (!found) throw new ApiError('trip_not_found', `trip_id: no trip '${request.params.trip_id}' for this user`);
      const t = found.trip;
      return {
        appId: scope.appId,
        userId: scope.userId,
        orgUserId: scope.orgUserId,
        trip: {
          ...brief(t),
          abnormalReason: t.abnormal_reason,
          os: t.os,
          avgSpeedInKmh: round(t.avg_speed_kmh, 2),
          maxSpeedInKmh: round(t.max_speed_kmh, 2),
          coordinate: t.coordinate,
          isAutoStart: t.is_auto_start,
          isAutoEnd: t.is_auto_end,
          events: found.events.map((e) => ({
            startPoint: point(e.start_lat, e.start_lng),
            endPoint: point(e.end_lat, e.end_lng),
            type: e.type,
            startTime: e.start_time,
            endTime: e.end_time,
            description: e.description,
          })),
        },
      };
    },
  );
}
