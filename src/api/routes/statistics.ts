import type { FastifyInstance } from 'fastify';
import { type ApiContext, onSnapshot, round, scopeFor } from '../context.js';
import { ApiError, invalid } from '../errors.js';
import { parseQueryDate } from '../query-time.js';
import { latestScore, statistics } from '../repository.js';
import { errorResponses, identity, OrgUserParams } from '../schemas.js';
import { epochDay } from '../../serving/periods.js';
import { todayIn } from '../../time.js';

const MAX_DAYS = { day: 366, week: 1100, month: 1100 } as const;

/** Operations 3 and 4: statistics per day/week/month, and the latest safety score. */
export function statisticsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Params: { org_user_id: string }; Querystring: { type?: 'day' | 'week' | 'month'; startTime: string; endTime: string } }>(
    '/v1/org-user/:org_user_id/statistics',
    {
      schema: {
        summary: 'Trip statistics per day, ISO week or month (dense, clipped to the range)',
        params: OrgUserParams,
        querystring: {
          type: 'object', required: ['startTime', 'endTime'], additionalProperties: false,
          properties: { type: { type: 'string', enum: ['day', 'week', 'month'], default: 'day' }, startTime: { type: 'string', maxLength: 10 }, endTime: { type: 'string', maxLength: 10 } },
        },
        response: {
          200: {
            type: 'object', required: ['appId', 'userId', 'orgUserId', 'statistics'],
            properties: {
              ...identity,
              statistics: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['startTime', 'endTime', 'mileageInMeters', 'eventCount', 'avgSpeedInKmh', 'maxSpeedInKmh', 'durationInSeconds', 'score'],
                  properties: {
                    startTime: { type: 'string' }, endTime: { type: 'string' }, mileageInMeters: { type: 'integer' }, eventCount: { type: 'integer' },
                    avgSpeedInKmh: { type: 'number' }, maxSpeedInKmh: { type: 'number' }, durationInSeconds: { type: 'integer' }, score: { type: 'number' },
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
      if (days > MAX_DAYS[type]) throw invalid('endTime', `the range is ${days} days; at most ${MAX_DAYS[type]} for type=${type}`);
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const rows = await onSnapshot(ctx, (s) => statistics(s, scope, type, start, end));
      return {
        appId: scope.appId, userId: scope.userId, orgUserId: scope.orgUserId,
        statistics: rows.map((r) => ({
          startTime: `${r['period_start']} 00:00:00`, endTime: `${r['period_end']} 23:59:59`,
          mileageInMeters: Number(r['mileage_m']), eventCount: Number(r['count_events']),
          avgSpeedInKmh: round(r['avg_speed_kmh'], 2), maxSpeedInKmh: round(r['max_speed_kmh'], 2),
          durationInSeconds: Number(r['duration_s']), score: round(r['score'], 2),
        })),
      };
    },
  );

  app.get<{ Params: { org_user_id: string }; Querystring: { interval: number } }>(
    '/v1/org-user/:org_user_id/safety-score',
    {
      schema: {
        operationId: 'getSafetyScore',
        tags: ['Safety score'],
        summary: 'The latest daily safety score (30 or 90 days) with its factors',
        description: 'The newest score not after today in the app zone; 404 score_not_available when the user has none yet.',
        params: OrgUserParams,
        querystring: {
          type: 'object', required: ['interval'], additionalProperties: false,
          properties: { interval: { type: 'integer', enum: [30, 90], description: 'Days the score covers: 30 or 90, a plain decimal integer' } },
        },
        response: {
          200: {
            type: 'object', required: ['appId', 'userId', 'orgUserId', 'score'],
            properties: {
              ...identity,
              score: {
                type: 'object', required: ['evaluationTime', 'startTime', 'endTime', 'safetyScore'],
                properties: {
                  evaluationTime: { type: 'string' }, startTime: { type: 'string' }, endTime: { type: 'string' }, safetyScore: { type: 'number' },
                  tripCount: { type: 'integer' }, distractedDriving: { type: 'number' }, eveningRushHour: { type: 'number' },
                  acclongAbs1: { type: 'number' }, weekdayDriving: { type: 'number' }, lowSpeed: { type: 'number' },
                },
              },
            },
            examples: [{
              appId: 'app_0123456789abcdef', userId: 4503599627370497, orgUserId: 'driver-1',
              score: {
                evaluationTime: '2026-11-24 00:00:00', startTime: '2026-10-25 00:00:00', endTime: '2026-11-23 23:59:59', safetyScore: 87.25, tripCount: 41,
                distractedDriving: 0.0123, eveningRushHour: 0.1841, acclongAbs1: 0.0312, weekdayDriving: 0.7422, lowSpeed: 0.2105,
              },
            }],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const today = todayIn(scope.zone, ctx.now());
      const row = await onSnapshot(ctx, (s) => latestScore(s, scope, request.query.interval, today));
      if (!row) throw new ApiError('score_not_available', `no ${request.query.interval}-day score for '${scope.orgUserId}' yet`);
      return {
        appId: scope.appId, userId: scope.userId, orgUserId: scope.orgUserId,
        score: {
          evaluationTime: row['evaluation_time'], startTime: row['start_time'], endTime: row['end_time'],
          safetyScore: round(row['safety_score'], 2), tripCount: row['count_trips'],
          distractedDriving: round(row['distracted_driving'], 4), eveningRushHour: round(row['evening_rush_hour'], 4),
          acclongAbs1: round(row['acclong_abs_1'], 4), weekdayDriving: round(row['weekday_driving'], 4), lowSpeed: round(row['low_speed'], 4),
        },
      };
    },
  );
}
