import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { Readable } from 'node:stream';
import { type ApiContext, onSnapshot, scopeFor } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { RouteWork } from '../geometry/route-work.js';
import { ROUTE_COST } from '../http/cost.js';
import { tripRoute } from '../geometry/trip-route.js';
import { errorResponses, identity, OrgUserParams } from '../openapi/schemas.js';

declare module 'fastify' {
  interface FastifySchema {
    /** For the OpenAPI document. */
    operationId?: string;
    tags?: string[];
    description?: string;
  }
}

/** Default and largest simplification tolerance, metres (docs/api-route.md). */
export const DEFAULT_TOLERANCE_M = 5;
export const MAX_TOLERANCE_M = 1000;

const position = { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 } as const;

const EXAMPLE = {
  appId: 'app_4f1c2a9d8e7b6c5a',
  userId: 3942785012345678,
  orgUserId: 'driver-1',
  tripId: 'trip-2026-11-20-0715',
  route: {
    type: 'Feature',
    geometry: {
      type: 'LineString',
      coordinates: [
        [13.4, 52.5],
        [13.4012, 52.5031],
        [13.4057, 52.5049],
      ],
    },
    properties: {
      tripId: 'trip-2026-11-20-0715',
      coordinate: 'WGS84',
      startTime: '2026-11-20 07:15:00',
      endTime: '2026-11-20 07:16:00',
      tolerance: 5,
      keptPointCount: 61,
      times: [1795587300000, 1795587330000, 1795587360000],
      speedsInKmh: [43.2, 51.84, 38.88],
    },
  },
  events: {
    type: 'FeatureCollection',
    features: [
      {
        type: 'Feature',
        geometry: {
          type: 'MultiPoint',
          coordinates: [
            [13.4031, 52.504],
            [13.4035, 52.5042],
          ],
        },
        properties: {
          type: 'brake',
          description: 'Hard braking',
          startTime: '2026-11-20 07:15:40',
          endTime: '2026-11-20 07:15:43',
        },
      },
    ],
  },
};

/** The route's path: the user and the trip. */
const RouteParams = {
  type: 'object',
  required: ['org_user_id', 'trip_id'],
  properties: {
    org_user_id: {
      ...OrgUserParams.properties.org_user_id,
      description: "The integrator's user id (orgUserId).",
    },
    trip_id: { type: 'string', minLength: 1, maxLength: 256, description: 'The trip id (tripId).' },
  },
} as const;

/** The route's query: the simplification's tolerance. */
const RouteQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tolerance: {
      type: 'number',
      minimum: 0,
      maximum: MAX_TOLERANCE_M,
      default: DEFAULT_TOLERANCE_M,
      description: `Simplification tolerance in metres, any number from 0 to ${MAX_TOLERANCE_M}, decimals included (2.5); 0 returns every kept point. Default ${DEFAULT_TOLERANCE_M}.`,
    },
  },
} as const;

/** The trip drawn on a map: its kept points as a simplified GeoJSON LineString, and its events. */
export function tripRouteEndpoint(app: FastifyInstance, ctx: ApiContext, work = new RouteWork(ctx.limits)): void {
  app.get<{ Params: FromSchema<typeof RouteParams>; Querystring: FromSchema<typeof RouteQuery> }>(
    '/v1/org-user/:org_user_id/trip/:trip_id/route',
    {
      config: { cost: ROUTE_COST },
      schema: {
        operationId: 'getTripRoute',
        tags: ['Trips'],
        summary: "The trip's route as GeoJSON, simplified, with its events",
        description:
          'The kept points of the trip (after every drop rule) in time order, as a GeoJSON Feature (RFC 7946, [longitude, latitude] as ' +
          'delivered; `properties.coordinate` says WGS84 or GCJ02), simplified by Douglas–Peucker at `tolerance` metres on an ' +
          'equirectangular projection centred on the first point; the first and last points are always kept. `properties.times` ' +
          "(epoch ms) and `properties.speedsInKmh` have one entry per position. The trip's events come as a FeatureCollection. " +
          'Served while the raw points are kept (DRIVING_POINTS_RETENTION_DAYS, 30 by default); afterwards 404 route_not_available.',
        params: RouteParams,
        querystring: RouteQuery,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'tripId', 'route', 'events'],
            examples: [EXAMPLE],
            properties: {
              ...identity,
              tripId: { type: 'string' },
              route: {
                type: 'object',
                required: ['type', 'geometry', 'properties'],
                properties: {
                  type: { type: 'string' },
                  // LineString (2+ points), Point (1) or null (none)
                  geometry: { type: ['object', 'null'], properties: { type: { type: 'string' }, coordinates: {} } },
                  properties: {
                    type: 'object',
                    required: [
                      'tripId',
                      'coordinate',
                      'startTime',
                      'endTime',
                      'tolerance',
                      'keptPointCount',
                      'times',
                      'speedsInKmh',
                    ],
                    properties: {
                      tripId: { type: 'string' },
                      coordinate: { type: 'string' },
                      startTime: { type: 'string' },
                      endTime: { type: 'string' },
                      tolerance: { type: 'number' },
                      keptPointCount: { type: 'integer' },
                      times: { type: 'array', items: { type: 'number' } },
                      speedsInKmh: { type: 'array', items: { type: 'number' } },
                    },
                  },
                },
              },
              events: {
                type: 'object',
                required: ['type', 'features'],
                properties: {
                  type: { type: 'string' },
                  features: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['type', 'geometry', 'properties'],
                      properties: {
                        type: { type: 'string' },
                        geometry: {
                          type: 'object',
                          properties: { type: { type: 'string' }, coordinates: { type: 'array', items: position } },
                        },
                        properties: {
                          type: 'object',
                          properties: {
                            type: { type: 'string' },
                            description: { type: 'string' },
                            startTime: { type: 'string' },
                            endTime: { type: 'string' },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { org_user_id: orgUserId, trip_id: tripId } = request.params;
      const scope = await scopeFor(ctx, request.tenant, orgUserId);
      const tolerance = request.query.tolerance ?? DEFAULT_TOLERANCE_M;
      // serialised here: V8's JSON.stringify writes a route's thousands of numbers much faster
      // than the schema's serialiser, and the body is built to the schema above; the work is
      // bounded however long the trip (route-work.ts)
      const head = { appId: scope.appId, userId: scope.userId, orgUserId: scope.orgUserId, tripId };
      const body = await onSnapshot(
        ctx,
        (s, { routesDir }) =>
          tripRoute(s, scope, tripId, routesDir, (found) =>
            work.render({ head, trip: found.trip, events: found.events }, found.points, tolerance),
          ),
        scope,
      );
      if (!body) throw new ApiError('trip_not_found', `trip_id: no trip '${tripId}' for this user`);
      if (body === 'expired') {
        throw new ApiError(
          'route_not_available',
          `trip_id: the route of trip '${tripId}' is no longer available: raw points are kept only for a limited number of days after the trip`,
        );
      }
      reply.type('application/json; charset=utf-8');
      if (typeof body === 'string') return reply.send(body);
      // a long route: its pieces are written one at a time, never joined into one buffer
      return reply
        .header(
          'content-length',
          body.reduce((sum, piece) => sum + piece.length, 0),
        )
        .send(Readable.from(body));
    },
  );
}
