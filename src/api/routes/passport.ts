import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import type { ApiContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { errorResponses, OrgUserParams } from '../openapi/schemas.js';
import { StorageUnavailableError } from '../../passport/deletion.js';
import { isMachineError } from '../../machine-error.js';

export const TOKEN_VALIDITY_MS = 7 * 24 * 3600 * 1000;

/** A token's path. */
const TokenParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

/** Operations 5 and 6: issue a passport token (creating the account), resolve a token's holder. */
export function passportRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Params: FromSchema<typeof OrgUserParams> }>(
    '/v1/org-user/:org_user_id/token',
    {
      schema: {
        summary: 'Issue a 7-day passport token; creates the account when there is none',
        params: OrgUserParams,
        response: {
          200: {
            type: 'object',
            required: ['code', 'message', 'token', 'platformUserId'],
            properties: {
              code: { type: 'integer' },
              message: { type: 'string' },
              token: { type: 'string' },
              platformUserId: { type: 'integer' },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const issued = await ctx.passport.issueToken(
        request.tenant.appId,
        request.params.org_user_id,
        ctx.now(),
        TOKEN_VALIDITY_MS,
      );
      return { code: 0, message: 'success', token: issued.token, platformUserId: issued.platformUserId };
    },
  );

  app.delete<{ Params: FromSchema<typeof OrgUserParams> }>(
    '/v1/org-user/:org_user_id',
    {
      schema: {
        summary:
          'Delete the account: tokens stop working and its data stops being served at once; the next job run purges the data',
        params: OrgUserParams,
        response: {
          200: {
            type: 'object',
            required: ['code', 'message', 'platformUserId'],
            properties: { code: { type: 'integer' }, message: { type: 'string' }, platformUserId: { type: 'integer' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      // the request the jobs act on and the account's mark are one committed transaction (docs/decisions.md, Deletion)
      const userId = await ctx.deletion
        .delete(request.tenant.appId, request.params.org_user_id, ctx.now())
        .catch((error: unknown) => {
          // a full disk is answered as every route answers it (storage_full, with Retry-After)
          if (error instanceof StorageUnavailableError && !isMachineError(error.cause)) {
            request.log.error({ err: error.cause }, 'deletion not recorded');
            throw new ApiError(
              'storage_unavailable',
              'storage unavailable: the deletion could not be recorded and nothing was deleted; retry later',
            );
          }
          throw error;
        });
      if (userId === null) throw new ApiError('user_not_found', `org_user_id: no user '${request.params.org_user_id}'`);
      return { code: 0, message: 'success', platformUserId: userId };
    },
  );

  app.get<{ Params: FromSchema<typeof TokenParams> }>(
    '/v1/token/:token',
    {
      schema: {
        summary: 'The holder of a valid passport token of the calling app',
        params: TokenParams,
        response: {
          200: {
            type: 'object',
            required: ['platformUserId', 'orgUserId'],
            properties: { platformUserId: { type: 'integer' }, orgUserId: { type: 'string' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const holder = await ctx.passport.tokenHolder(request.tenant.appId, request.params.token, ctx.now());
      if (!holder) throw new ApiError('token_not_found', 'token: unknown, expired or revoked');
      return holder;
    },
  );
}
