import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import type { ApiContext } from '../http/context.js';
import { ApiError, invalid } from '../http/errors.js';
import { parseQueryTime } from '../http/query-time.js';
import { errorResponses } from '../openapi/schemas.js';
import { InputError } from '../../errors.js';
import { isMachineError } from '../../machine-error.js';
import type { EventStatus } from '../../webhooks/outbox.js';
import type { WebhookService } from '../../webhooks/integrator.js';
import { Delivery, Endpoint, EndpointBody, EndpointSet, examples } from './webhooks-schemas.js';

const TAG = ['Webhooks'];

/**
 * The webhook API (docs/decisions.md, Webhooks (delivery)): each operation is one
 * call on the WebhookService, scoped to the calling app.
 */
export function webhookRoutes(app: FastifyInstance, ctx: ApiContext & { webhooks: WebhookService }): void {
  const hooks = ctx.webhooks;
  const endpointOr404 = async (appId: string) => {
    const endpoint = await hooks.endpoint(appId);
    if (!endpoint)
      throw new ApiError('endpoint_not_found', 'no webhook endpoint is set; set one with PUT /v1/webhooks/endpoint');
    return endpoint;
  };

  app.get(
    '/v1/webhooks/endpoint',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        tags: TAG,
        summary: 'The webhook endpoint',
        description:
          'The URL events are sent to, the event types it takes (empty: every type), and whether it is enabled; a disabled endpoint says why (a 410 answer, or every attempt failed for 5 days). 404 when none is set.',
        response: { 200: { ...Endpoint, examples: [examples.endpoint] }, ...errorResponses },
      },
    },
    async (request) => endpointOr404(request.tenant.appId),
  );

  app.put<{ Body: { url: string; eventTypes?: string[] } }>(
    '/v1/webhooks/endpoint',
    {
      schema: {
        operationId: 'setWebhookEndpoint',
        tags: TAG,
        summary: 'Set the webhook endpoint (enables a disabled one)',
        description:
          "The URL must be https, and its host must resolve only to public addresses: loopback, private, link-local, unique-local and cloud metadata addresses are refused with a 400 naming the reason (the deliverer checks the addresses again at every connection). `eventTypes` lists the types to send; none listed means every type. Setting the endpoint enables it again and sends it the events kept meanwhile (up to 30 days while no endpoint was set, of the types it takes): the answer's `backlog` says how many.",
        body: EndpointBody,
        response: { 200: { ...EndpointSet, examples: [{ ...examples.endpoint, backlog: 12 }] }, ...errorResponses },
      },
    },
    async (request) => {
      try {
        return await hooks.setEndpoint(
          request.tenant.appId,
          request.body.url,
          request.body.eventTypes ?? [],
          ctx.now(),
        );
      } catch (error) {
        if (error instanceof InputError)
          throw new ApiError(
            'invalid_parameter',
            error.message.startsWith('url:')
              ? error.message
              : `url: ${error.message.replace(/^--webhook-url:? ?/, '')}`,
          );
        throw error;
      }
    },
  );

  app.delete(
    '/v1/webhooks/endpoint',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags: TAG,
        summary: 'Remove the webhook endpoint',
        description:
          'Events are no longer sent; they are kept for 30 days from their creation and sent when an endpoint is set again within that time, then dropped. 404 when none is set.',
        response: {
          200: {
            type: 'object',
            required: ['deleted'],
            properties: { deleted: { type: 'boolean' } },
            examples: [{ deleted: true }],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      if (!(await hooks.removeEndpoint(request.tenant.appId)))
        throw new ApiError('endpoint_not_found', 'no webhook endpoint is set');
      return { deleted: true };
    },
  );

  app.post(
    '/v1/webhooks/endpoint/test',
    {
      schema: {
        operationId: 'testWebhookEndpoint',
        tags: TAG,
        summary: 'Send a webhook.test event and see the answer',
        description:
          'Sends one `webhook.test` event to the endpoint now, signed like every event, and answers with what the receiver said (its status code, or why nothing came back within 10 s). The test event is not stored and not retried. It is sent to a disabled endpoint too.',
        response: {
          200: {
            type: 'object',
            required: ['eventId', 'delivered', 'statusCode', 'error', 'durationMs'],
            properties: {
              eventId: { type: 'string' },
              delivered: { type: 'boolean' },
              statusCode: { type: ['integer', 'null'] },
              error: { type: ['string', 'null'] },
              durationMs: { type: 'integer' },
            },
            examples: [
              {
                eventId: 'evt_test_5b0c1e2f3a4b5c6d7e8f9a0b',
                delivered: true,
                statusCode: 204,
                error: null,
                durationMs: 84,
              },
            ],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const result = await hooks.sendTest(request.tenant.appId, ctx.now());
      if (!result) throw new ApiError('endpoint_not_found', 'no webhook endpoint is set');
      return result;
    },
  );

  app.get<{ Querystring: { status?: EventStatus; limit?: number; nextCursor?: string } }>(
    '/v1/webhooks/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: TAG,
        summary: 'Events and their delivery, newest first',
        description:
          'Every event of the app kept in the outbox, newest first: its status (`pending`: an attempt is coming; `failed`: dead-lettered; `delivered`; `filtered`: the endpoint does not take its type), the attempts sent, the last response code or error, and when the next attempt is due. Pass `nextCursor` unchanged for the next page.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: {
              type: 'string',
              enum: ['pending', 'failed', 'delivered', 'filtered'],
              description: 'Only events in this state',
            },
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Events per page, 1 to 100' },
            nextCursor: {
              type: 'string',
              maxLength: 1000,
              description: 'The nextCursor of the previous page, exactly as it was returned',
            },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['deliveries'],
            properties: { nextCursor: { type: 'string' }, deliveries: { type: 'array', items: Delivery } },
            examples: [{ deliveries: [examples.delivery] }],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { status, limit = 50, nextCursor } = request.query;
      const appId = request.tenant.appId;
      const filters = createHash('sha256')
        .update(JSON.stringify(['deliveries', appId, status ?? null]))
        .digest('base64url');
      const beforeSeq = nextCursor ? Number(ctx.cursors.decode(nextCursor, filters).startedUs) : null;
      const page = await outboxCall(() =>
        hooks.deliveries(appId, { status: status ?? null, limit, beforeSeq }, ctx.now()),
      );
      const cursor =
        page.more && page.lastSeq !== null
          ? ctx.cursors.encode({ startedUs: String(page.lastSeq), tripId: '' }, filters)
          : undefined;
      return { ...(cursor ? { nextCursor: cursor } : {}), deliveries: page.deliveries };
    },
  );

  app.post<{ Params: { eventId: string } }>(
    '/v1/webhooks/deliveries/:eventId/resend',
    {
      schema: {
        operationId: 'resendWebhookEvent',
        tags: TAG,
        summary: 'Send one event again',
        description:
          'Queues one more attempt of a delivered or dead-lettered event (with its id and body unchanged); the deliverer sends it within a few seconds. One attempt, not a new schedule. An event that is still pending gets a 400: its next attempt comes anyway.',
        params: {
          type: 'object',
          required: ['eventId'],
          properties: {
            eventId: {
              type: 'string',
              minLength: 1,
              maxLength: 200,
              description: 'The event id (`id` in the body, `webhook-id`)',
            },
          },
        },
        response: {
          202: {
            type: 'object',
            required: ['queued'],
            properties: { queued: { type: 'array', items: { type: 'string' } } },
            examples: [{ queued: ['evt_5b0c1e2f3a4b5c6d'] }],
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const queued = await outboxCall(() => hooks.resend(request.tenant.appId, request.params.eventId, ctx.now()));
      if (!queued) throw new ApiError('event_not_found', `eventId: no event '${request.params.eventId}' for this app`);
      return reply.status(202).send({ queued });
    },
  );

  app.post<{ Body: { since: string } }>(
    '/v1/webhooks/recover',
    {
      schema: {
        operationId: 'recoverWebhookEvents',
        tags: TAG,
        summary: 'Send every event since a time again',
        description:
          'Queues one more attempt of every delivered, dead-lettered or filtered event of the app created at or after `since` (events still pending are sent anyway). Events are kept 30 days after they finished, so that is how far back recovery reaches.',
        body: {
          type: 'object',
          required: ['since'],
          additionalProperties: false,
          properties: {
            since: {
              type: 'string',
              maxLength: 40,
              description: "YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS' in the app's zone, or ISO 8601 with an offset",
            },
          },
        },
        response: {
          202: {
            type: 'object',
            required: ['queued'],
            properties: { queued: { type: 'integer' } },
            examples: [{ queued: 12 }],
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const since = parseQueryTime('since', request.body.since, request.tenant.timeZone, 'start');
      if (since.getTime() > ctx.now().getTime()) throw invalid('since', 'is in the future');
      const queued = await outboxCall(() => hooks.recover(request.tenant.appId, since, ctx.now()));
      return reply.status(202).send({ queued: queued.length });
    },
  );

  app.post(
    '/v1/webhooks/secret/rotate',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: TAG,
        summary: 'Issue a new AppSecret (shown once)',
        description:
          'A new AppSecret, shown only in this answer, also as `standardWebhooksSecret` (`whsec_` + base64 of its UTF-8 bytes) for Standard Webhooks libraries. For 24 hours `webhook-signature` carries a signature with each secret and `Authorization` stays signed with the previous one; then both use the new one only. A second rotation within the 24 hours keeps every replaced secret signing until 24 hours after its own rotation (`Authorization` uses the oldest).',
        response: {
          200: {
            type: 'object',
            required: ['appSecret', 'standardWebhooksSecret', 'previousSecretValidUntil'],
            properties: {
              appSecret: { type: 'string' },
              standardWebhooksSecret: { type: 'string' },
              previousSecretValidUntil: { type: 'string' },
            },
            examples: [
              {
                appSecret: 'ds_Zk3…',
                standardWebhooksSecret: 'whsec_ZHNfWmsz…',
                previousSecretValidUntil: '2026-11-26T14:00:00.000Z',
              },
            ],
          },
          ...errorResponses,
        },
      },
    },
    async (request) => hooks.rotateSecret(request.tenant.appId, ctx.now()),
  );
}

/** The outbox is the deliverer's: when it cannot be reached, nothing changed and the client retries. */
async function outboxCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // a full disk is answered as every route answers it (storage_full, with Retry-After)
    if (error instanceof ApiError || isMachineError(error)) throw error;
    if (error instanceof InputError)
      throw new ApiError('invalid_parameter', `eventId: ${error.message.replace(/^event /, 'the event ')}`);
    throw new ApiError(
      'storage_unavailable',
      'the webhook outbox is busy or unavailable; nothing changed, retry shortly',
    );
  }
}
