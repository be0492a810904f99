import type { FastifyInstance } from 'fastify';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiContext } from '../http/context.js';
import { ApiError, invalid } from '../http/errors.js';
import { ErrorResult, errorResponses } from '../openapi/schemas.js';
import { uploadRejection } from '../upload/upload-check.js';
import { uploadWarnings } from '../upload/upload-warnings.js';
import { uploadBody } from '../http/upload-encoding.js';
import { loneSurrogatePath } from '../upload/well-formed.js';
import { uploadFileName } from '../../load/uploads.js';

export const MAX_RECORDS_PER_UPLOAD = 500;

/**
 * docs/decisions.md, API: the SDK uploads trips with its passport token; 202 once they are durably
 * landed, or committed in PostgreSQL with DATABASE_URL (docs/decisions.md, "Uploads across machines").
 */
export function sdkRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Body: unknown }>(
    '/v1/sdk/trips',
    {
      // the SDK presents the passport token it was given, never the integrator's API key; the
      // token is checked before the body is read (auth.ts), which may then be this large
      config: { auth: 'passportToken' },
      bodyLimit: ctx.limits.sdkBodyLimitBytes,
      // a gzip body is inflated here, the limit counting the inflated bytes (docs/decisions.md, API)
      preParsing: async (request, _reply, payload) =>
        uploadBody(request.headers, payload, ctx.limits.sdkBodyLimitBytes),
      schema: {
        operationId: 'uploadTrips',
        tags: ['SDK'],
        summary: 'SDK upload: one trip record or an array, with Authorization: Bearer <passport token>',
        description:
          'The token is checked before the body is read: without a valid one the answer is 401 at once and a large body is not waited for. ' +
          `At most ${MAX_RECORDS_PER_UPLOAD} records and 8 MiB by default (DRIVING_API_SDK_BODY_LIMIT_BYTES; 413), JSON nested at most 32 deep (400), ` +
          '120 uploads a minute per token by default (429 with Retry-After). ' +
          'The body may be sent with `Content-Encoding: gzip` (the limits count the inflated bytes, 413 as soon as they are passed); any other encoding, and a charset other than UTF-8, is a 415 naming it. 202 once the valid records are durably landed; each refused record is listed with its reason. ' +
          'When the disk has no room for them the answer is 503 `storage_full` with Retry-After, and when the shared store (PostgreSQL, with several machines) does not answer it is 503 `storage_unavailable` with Retry-After: nothing was stored, send the same upload again.',
        response: {
          202: {
            type: 'object',
            required: ['code', 'message', 'accepted', 'rejected'],
            properties: {
              code: { type: 'integer' },
              message: { type: 'string' },
              accepted: { type: 'integer' },
              warnings: {
                type: 'array',
                description:
                  'Present when an accepted record will not be served whole: `route_beyond_retention`, a trip dated before the routes kept (DRIVING_POINTS_RETENTION_DAYS, `retentionDays`), is served without its route.',
                items: {
                  type: 'object',
                  properties: {
                    index: { type: 'integer' },
                    tripId: { type: 'string' },
                    warning: { type: 'string' },
                    retentionDays: { type: 'integer' },
                    detail: { type: 'string' },
                  },
                },
              },
              rejected: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    index: { type: 'integer' },
                    tripId: { type: 'string' },
                    reason: { type: 'string' },
                    field: {
                      type: 'string',
                      description:
                        'The offending field, where the reason alone does not name it (a string with a lone UTF-16 surrogate: `invalid_json`).',
                    },
                    detail: {
                      type: 'string',
                      description:
                        "`time_out_of_range`: the allowed range of record times, the server's time it follows from, and the time outside it.",
                    },
                  },
                },
              },
            },
            examples: [
              {
                code: 0,
                message: 'accepted',
                accepted: 1,
                rejected: [{ index: 1, tripId: 't-2', reason: 'invalid_os' }],
              },
            ],
          },
          ...errorResponses,
          413: ErrorResult,
          415: ErrorResult,
        },
      },
    },
    async (request, reply) => {
      // checked again now the body is in: the account may have been deleted, or the token have
      // expired, while it was sent
      const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
      const owner = match ? await ctx.passport.tokenOwner(match[1] as string, ctx.now()) : null;
      if (!owner)
        throw new ApiError('unauthorized', 'Authorization: expected "Bearer <passport token>" with a valid token');
      const records = Array.isArray(request.body) ? request.body : [request.body];
      if (records.length === 0) throw invalid('body', 'no trip records');
      if (records.length > MAX_RECORDS_PER_UPLOAD)
        throw invalid('body', `at most ${MAX_RECORDS_PER_UPLOAD} records per upload, got ${records.length}`);
      const rejected: { index: number; tripId?: string; reason: string; field?: string; detail?: string }[] = [];
      const accepted: { index: number; record: Record<string, unknown> }[] = [];
      const lines: string[] = [];
      // record times are judged against the moment of the upload (docs/decisions.md, Trip records (load))
      const uploadedAt = ctx.now();
      records.forEach((record, index) => {
        const tripId = (record as Record<string, unknown> | null)?.['tripId'];
        const field = loneSurrogatePath(record);
        if (field !== null) {
          // the load refuses such a line whole (invalid_json); a tripId that is not well formed is not echoed
          rejected.push({
            index,
            ...(typeof tripId === 'string' && field !== 'tripId' ? { tripId } : {}),
            reason: 'invalid_json',
            field,
          });
          return;
        }
        const rejection = uploadRejection(record, uploadedAt);
        if (rejection) rejected.push({ index, ...(typeof tripId === 'string' ? { tripId } : {}), ...rejection });
        // identity comes from the token, whatever the body says
        else {
          accepted.push({ index, record: record as Record<string, unknown> });
          lines.push(
            JSON.stringify({
              ...(record as object),
              appId: owner.appId,
              platformUserId: owner.platformUserId,
              orgUserId: owner.orgUserId,
            }),
          );
        }
      });
      if (lines.length === 0) {
        throw invalid(
          'body',
          `no valid record: ${rejected.map((r) => `[${r.index}] ${r.reason}${r.field ? ` (${r.field}: a lone UTF-16 surrogate)` : ''}${r.detail ? ` (${r.detail})` : ''}`).join(', ')}`,
        );
      }
      const warnings = await uploadWarnings(ctx, owner.appId, accepted, uploadedAt);
      const content = `${lines.join('\n')}\n`;
      // with DATABASE_URL the upload is committed in PostgreSQL, whichever machine took it, and the
      // job machine's load takes it in (src/intake/); else it lands in this machine's landing area
      // with cells, it waits for the load of its driver's cell (given one now if it has none)
      if (ctx.uploads)
        await ctx.uploads.put(
          uploadFileName(new Date()),
          owner.appId,
          uploadedAt,
          Buffer.from(content),
          await ctx.passport.cells.cellOf(owner.appId, owner.platformUserId),
        );
      else await landDurably(ctx.landingDir, content);
      return reply.status(202).send({
        code: 0,
        message: 'accepted',
        accepted: lines.length,
        rejected,
        ...(warnings.length ? { warnings } : {}),
      });
    },
  );
}

/**
 * Write aside, fsync, rename, fsync the folder: once we answer 202 the records survive a crash.
 * Asynchronous, so a slow disk delays this upload only, not every other request. A write that
 * fails (a full disk: 503 storage_full, src/api/http/storage-full.ts) removes its temporary file:
 * nothing of an upload not answered 202 is left behind.
 */
async function landDurably(landingDir: string, content: string): Promise<void> {
  await mkdir(landingDir, { recursive: true });
  const name = uploadFileName(new Date());
  const tmp = join(landingDir, `.${name}.tmp`);
  const file = await open(tmp, 'w', 0o600);
  try {
    try {
      await file.writeFile(content);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, join(landingDir, name));
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
  const dir = await open(landingDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
