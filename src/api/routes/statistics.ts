import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { type ApiContext, onSnapshot, round, scopeFor } from '../http/context.js';
import { invalid } from '../http/errors.js';
import { parseQueryDate } from '../http/query-time.js';
import { statistics } from '../read/repository.js';
import { errorResponses, identity, OrgUserParams } from '../openapi/schemas.js';
import { epochDay } from '../../serving/periods.js';
import { rangeCost } from '../http/cost.js';

const MAX_DAYS = { day: 366, week: 1100, month: 1100 } as const;

/** The statistics' query: the period and the range of dates. */
const StatisticsQuery = {
  type: 'object',
  required: ['startTime', 'endTime'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['day', 'week', 'month'], default: 'day' },
    startTime: { type: 'string', maxLength: 10 },
    endTime: { type: 'string', maxLength: 10 },
  },
} as const;

/** Statistics per day/week/month (the safety score is in safety-score.ts). */
export function statisticsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Params: FromSchema<typeof OrgUserParams>; Querystring: FromSchema<typeof StatisticsQuery> }>(
    '/v1/org-user/:org_user_id/statistics',
    {
      // one unit per 92 days of the range: 4 for a year by day, 12 for 1,100 days by week or month
      config: { cost: rangeCost(92, 1) },
      schema: {
        summary: 'Trip statistics per day, ISO week or month (dense, clipped to the range)',
        params: OrgUserParams,
        querystring: StatisticsQuery,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'statistics'],
            properties: {
              ...identity,
              statistics: {
                type: 'array',
                items: {
                  type: 'object',
                  required: [
                    'startTime',
                    'endTime',
                    'mileageInMeters',
                    'eventCount',
                    'avgSpeedInKmh',
                    'maxSpeedInKmh',
                    'durationInSeconds',
                    'score',
                  ],
                  properties: {
                    startTime: { type: 'string' },
                    endTime: { type: 'string' },
                    mileageInMeters: { type: 'integer' },
                    eventCount: { type: 'integer' },
                    avgSpeedInKmh: { type: 'number' },
                    maxSpeedInKmh: { type: 'number' },
                    durationInSeconds: { type: 'integer' },
                    score: { type: 'number' },
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const type = request.query.type ?? 'day';
      const start = parseQueryDate('startTime', request.query.startTime);
      const end = parseQueryDate('endTime', request.query.endTime);
      if (end < start) throw invalid('endTime', 'must not be before startTime');
      const days = epochDay(end) - epochDay(start) + 1;
      if (days > MAX_DAYS[type])
        throw invalid('endTime', `the range is ${days} days; at most ${MAX_DAYS[type]} for type=${type}`);
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const rows = await onSnapshot(ctx, (s) => statistics(s, scope, type, start, end), scope);
      return {
        appId: scope.appId,
        userId: scope.userId,
        orgUserId: scope.orgUserId,
        statistics: rows.map((r) => ({
          startTime: `${r.period_start} 00:00:00`,
          endTime: `${r.period_end} 23:59:59`,
          mileageInMeters: r.mileage_m,
          eventCount: r.count_events,
          avgSpeedInKmh: round(r.avg_speed_kmh, 2),
          maxSpeedInKmh: round(r.max_speed_kmh, 2),
          durationInSeconds: r.duration_s,
          score: round(r.score, 2),
        })),
      };
    },
  );
}
