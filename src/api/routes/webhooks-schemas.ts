import { EVENT_TYPES } from '../../webhooks/intake.js';

/** JSON schemas of the webhook API (they validate, serialise and feed the OpenAPI document). */
export const Endpoint = {
  type: 'object',
  required: [
    'url',
    'eventTypes',
    'enabled',
    'disabledReason',
    'disabledAt',
    'failingSince',
    'previousSecretValidUntil',
  ],
  properties: {
    url: { type: 'string' },
    eventTypes: {
      type: 'array',
      items: { type: 'string' },
      description: 'Types sent to the endpoint; empty: every type',
    },
    enabled: { type: 'boolean' },
    disabledReason: {
      type: ['string', 'null'],
      description: 'Why the endpoint was disabled (a 410 answer, or 5 days of failed attempts); null while enabled',
    },
    disabledAt: { type: ['string', 'null'] },
    failingSince: {
      type: ['string', 'null'],
      description: 'Since when every attempt has failed; null after a success',
    },
    previousSecretValidUntil: {
      type: ['string', 'null'],
      description:
        'Until when the last previous AppSecret still signs, after rotations (every secret replaced within the last 24 hours signs until 24 hours after its rotation)',
    },
  },
} as const;

/** The answer of setting the endpoint: the endpoint, and how many kept events it is now sent. */
export const EndpointSet = {
  ...Endpoint,
  required: [...Endpoint.required, 'backlog'],
  properties: {
    ...Endpoint.properties,
    backlog: {
      type: ['integer', 'null'],
      description:
        'Events kept for the app (up to 30 days while it had no endpoint, or waiting for a retry) that are now sent to this endpoint; recover re-sends older ones. null: not counted this time (the endpoint is set all the same)',
    },
  },
} as const;

export const EndpointBody = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'An https URL whose host resolves to public addresses only',
    },
    eventTypes: {
      type: 'array',
      maxItems: EVENT_TYPES.length,
      items: { type: 'string', enum: [...EVENT_TYPES] },
      description: 'Event types to send; none listed: every type',
    },
  },
} as const;

export const Delivery = {
  type: 'object',
  required: [
    'eventId',
    'eventType',
    'status',
    'attempts',
    'lastResponseCode',
    'lastError',
    'lastAttemptAt',
    'nextAttemptAt',
    'createdAt',
  ],
  properties: {
    eventId: { type: 'string' },
    eventType: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'failed', 'delivered', 'filtered'] },
    attempts: {
      type: 'integer',
      description: 'Attempts sent (an attempt the deliverer skipped while the endpoint was down is not counted)',
    },
    lastResponseCode: { type: ['integer', 'null'] },
    lastError: { type: ['string', 'null'] },
    lastAttemptAt: { type: ['string', 'null'] },
    nextAttemptAt: { type: ['string', 'null'], description: 'When the next attempt is due; null when none is coming' },
    createdAt: { type: 'string' },
  },
} as const;

export const examples = {
  endpoint: {
    url: 'https://hooks.example.com/driving',
    eventTypes: ['trip.created'],
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    previousSecretValidUntil: null,
  },
  delivery: {
    eventId: 'evt_5b0c1e2f3a4b5c6d',
    eventType: 'trip.created',
    status: 'pending',
    attempts: 2,
    lastResponseCode: 503,
    lastError: 'HTTP 503',
    lastAttemptAt: '2026-11-25T10:05:00.000Z',
    nextAttemptAt: '2026-11-25T10:25:00.000Z',
    createdAt: '2026-11-25T10:00:00.000Z',
  },
};
