import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { type ApiContext, onSnapshot, scopeFor } from '../http/context.js';
import { ApiError, invalid } from '../http/errors.js';
import { parseQueryDate } from '../http/query-time.js';
import { latestScore, scoreHistory } from '../read/repository.js';
import { errorResponses, identity, OrgUserParams } from '../openapi/schemas.js';
import { scoreBody, scoreExample, ScoreSchema } from '../read/score-body.js';
import { epochDay, isoDate } from '../../serving/periods.js';
import { todayIn } from '../../time.js';
import { rangeCost } from '../http/cost.js';

/** The history's range limit, as statistics per day (docs/decisions.md, Statistics and scores). */
const MAX_DAYS = 366;

const interval = { type: 'integer', enum: [30, 90], description: 'The window in days: 30 or 90.' } as const;
const explain = {
  type: 'boolean',
  default: true,
  description: "Include each factor's value, multiplier and contribution (`factors`); false leaves them out.",
} as const;

/** The latest score's query. */
const ScoreQuery = {
  type: 'object',
  required: ['interval'],
  additionalProperties: false,
  properties: { interval, explain },
} as const;

/** The history's query. */
const ScoreHistoryQuery = {
  type: 'object',
  required: ['interval'],
  additionalProperties: false,
  properties: {
    interval,
    startTime: {
      type: 'string',
      maxLength: 10,
      description: 'First evaluation date, YYYY-MM-DD (default: 365 days before endTime).',
    },
    endTime: {
      type: 'string',
      maxLength: 10,
      description: "Last evaluation date, YYYY-MM-DD (default: today in the app's zone).",
    },
    explain,
  },
} as const;

/** The safety score (the latest, explained) and its history. */
export function safetyScoreRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Params: FromSchema<typeof OrgUserParams>; Querystring: FromSchema<typeof ScoreQuery> }>(
    '/v1/org-user/:org_user_id/safety-score',
    {
      schema: {
        operationId: 'getSafetyScore',
        tags: ['Safety score'],
        summary: 'The latest daily safety score (30 or 90 days) with its factors, explained and ranked',
        description:
          "The score with the latest evaluation date not after today (app zone), its five factors, its percentile among the app's drivers scored that day, the model version and, unless explain=false, what each model input costs in points. No score yet: 404 score_not_available.",
        params: OrgUserParams,
        querystring: ScoreQuery,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'score'],
            properties: { ...identity, score: ScoreSchema },
            examples: [{ appId: 'app_3f9c', userId: 7301844412, orgUserId: 'driver-1', score: scoreExample }],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const today = todayIn(scope.zone, ctx.now());
      const row = await onSnapshot(ctx, (s) => latestScore(s, scope, request.query.interval, today), scope);
      if (!row)
        throw new ApiError(
          'score_not_available',
          `no ${request.query.interval}-day score for '${scope.orgUserId}' yet`,
        );
      return {
        appId: scope.appId,
        userId: scope.userId,
        orgUserId: scope.orgUserId,
        score: scoreBody(row, request.query.explain !== false),
      };
    },
  );

  app.get<{ Params: FromSchema<typeof OrgUserParams>; Querystring: FromSchema<typeof ScoreHistoryQuery> }>(
    '/v1/org-user/:org_user_id/safety-score/history',
    {
      // one unit per 31 days of evaluation dates: 12 for the default 366
      config: { cost: rangeCost(31, MAX_DAYS) },
      schema: {
        operationId: 'getSafetyScoreHistory',
        tags: ['Safety score'],
        summary: 'The safety score over time: one entry per evaluation date, oldest first',
        description:
          'Every stored score of the user for the interval whose evaluation date lies from startTime to endTime (dates, both inclusive, app zone, at most 366 days; never after today), each with the fields of the latest score (GET ./safety-score). Without endTime: today; without startTime: 365 days before endTime. No score in the range: an empty list.',
        params: OrgUserParams,
        querystring: ScoreHistoryQuery,
        response: {
          200: {
            type: 'object',
            required: ['appId', 'userId', 'orgUserId', 'interval', 'history'],
            properties: { ...identity, interval: { type: 'integer' }, history: { type: 'array', items: ScoreSchema } },
            examples: [
              { appId: 'app_3f9c', userId: 7301844412, orgUserId: 'driver-1', interval: 30, history: [scoreExample] },
            ],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const q = request.query;
      // the range is checked before the user is looked up, as statistics does: a bad range is a 400 for anyone
      const today = todayIn(request.tenant.timeZone, ctx.now());
      const end = q.endTime === undefined ? null : parseQueryDate('endTime', q.endTime);
      const start = q.startTime === undefined ? null : parseQueryDate('startTime', q.startTime);
      const endDate = end ?? today;
      const startDate = start ?? isoDate(epochDay(endDate) - (MAX_DAYS - 1));
      // the parameter named is one the caller sent
      const culprit = end === null ? 'startTime' : 'endTime';
      if (endDate < startDate)
        throw invalid(culprit, end === null ? `must not be after today (${today})` : 'must not be before startTime');
      const days = epochDay(endDate) - epochDay(startDate) + 1;
      if (days > MAX_DAYS) throw invalid(culprit, `the range is ${days} days; at most ${MAX_DAYS}`);
      const scope = await scopeFor(ctx, request.tenant, request.params.org_user_id);
      const rows = await onSnapshot(
        ctx,
        (s) => scoreHistory(s, scope, { interval: q.interval, startDate, endDate, today }),
        scope,
      );
      return {
        appId: scope.appId,
        userId: scope.userId,
        orgUserId: scope.orgUserId,
        interval: q.interval,
        history: rows.map((row) => scoreBody(row, q.explain !== false)),
      };
    },
  );
}
