/**
 * What the OpenAPI document says about each operation beyond its JSON schemas: names, tags,
 * descriptions, parameter formats, units and an example answer. Kept apart from the routes so a
 * route stays a schema and a handler; a route's own `operationId`, `tags` or `description` win.
 */
export interface OperationDoc {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  parameters?: Record<string, string>;
  example?: unknown;
  requestBody?: unknown;
}

const TIME_RANGE =
  "YYYY-MM-DD (that whole day in the app's time zone), `YYYY-MM-DD HH:MM:SS` (the app's zone) or ISO 8601 with an offset (`2026-11-01T00:00:00+01:00`)";
const ID = 'Your own id of the user (`orgUserId`), 1-256 characters.';
const identity = { appId: 'app_3891b3f24799138f', userId: 8619952687728938, orgUserId: 'driver-00001' };
const point = (lat: number, lng: number) => ({ lng, lat });
const tripBrief = {
  tripId: 't-8619952687728938-20261122-1',
  deviceId: 'B8CD7D113CCF251D',
  status: 'normal',
  score: 63.18,
  energy: 526,
  mileageInMeters: 44853,
  durationInSeconds: 2545,
  startTime: '2026-11-22 10:43:57',
  endTime: '2026-11-22 11:26:22',
  startPoint: point(52.570694, 13.338183),
  endPoint: point(52.776699, 13.135247),
  eventCount: 14,
  startPoi: 'Home',
  endPoi: 'Cinema',
};

const { eventCount: _count, ...tripFields } = tripBrief;

export const TAGS = [
  {
    name: 'Trips',
    description: 'Trips with their dangerous-driving events, as the SDK recorded them and the load derived them.',
  },
  {
    name: 'Statistics',
    description: "Mileage, duration, events, speeds and score per day, ISO week or month, in the app's time zone.",
  },
  {
    name: 'Safety score',
    description: 'The daily 30- and 90-day safety score and the factors behind it (docs/models.md).',
  },
  { name: 'Passport', description: 'Accounts of your users and the tokens their SDK uses.' },
  {
    name: 'Webhooks',
    description:
      'Your webhook endpoint, its deliveries, re-sends and the AppSecret that signs them (docs/webhooks.md).',
  },
  { name: 'Exports', description: 'All of your trips at once, streamed as Apache Arrow or NDJSON.' },
  { name: 'SDK', description: 'What the mobile SDK calls, with a passport token instead of the API key.' },
  { name: 'Health', description: 'Liveness, readiness and this reference; no authentication.' },
];

export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /v1/org-user/{org_user_id}/trips': {
    operationId: 'listTrips',
    tag: 'Trips',
    summary: 'List trips, newest first',
    description:
      "The user's trips that start in [startTime, endTime], newest first, a page at a time: pass the answer's `nextCursor` unchanged as `nextCursor` for the next page (absent on the last page). A user with no trips gets an empty list. Units: `mileageInMeters` metres, `durationInSeconds` seconds, `energy` grams of CO2 saved, `score` 0-100.",
    parameters: {
      org_user_id: ID,
      nextCursor:
        'The `nextCursor` of the previous page, byte for byte; it only works with the same startTime and endTime.',
      limit: 'Trips per page, 1-100.',
      startTime: `Earliest trip start: ${TIME_RANGE}. Default: no lower bound.`,
      endTime: `Latest trip start, inclusive: ${TIME_RANGE}. Default: no upper bound.`,
    },
    example: { ...identity, trips: [tripBrief], nextCursor: 'WyIxNzk1MzQwNjM3MDAwMDAwIiwi...' },
  },
  'GET /v1/org-user/{org_user_id}/trip/{trip_id}': {
    operationId: 'getTrip',
    tag: 'Trips',
    summary: 'One trip with its events',
    description:
      'The trip with its derived fields and its dangerous-driving events in time order. An abnormal trip (`status: "abnormal"`, `abnormalReason` one of `time_inverted`, `too_few_points`, `speed_implausible`, `speed_inconsistent`, `too_short`, `overlapping_trip`, the first that applies) is shown but not counted in statistics or scores. Speeds in km/h.',
    parameters: { org_user_id: ID, trip_id: "The trip's id, as the SDK sent it." },
    example: {
      ...identity,
      trip: {
        ...tripFields,
        abnormalReason: '',
        os: 'ios',
        avgSpeedInKmh: 63.45,
        maxSpeedInKmh: 121.3,
        coordinate: 'WGS84',
        isAutoStart: true,
        isAutoEnd: true,
        events: [
          {
            startPoint: point(52.581152, 13.335879),
            endPoint: point(52.581279, 13.335851),
            type: 'brake',
            startTime: '2026-11-22 10:52:11',
            endTime: '2026-11-22 10:52:14',
            description: 'Hard braking at 25 km/h',
          },
        ],
      },
    },
  },
  'GET /v1/org-user/{org_user_id}/statistics': {
    operationId: 'getStatistics',
    tag: 'Statistics',
    summary: 'Statistics per day, ISO week or month',
    description:
      "One entry per period that meets [startTime, endTime] (every period, zeros where the user did not drive), clipped to the range, in the app's time zone. Normal trips only, each counted in the period its start falls in. At most 366 days for `type=day`, 1,100 for weeks and months. Units: metres, seconds, km/h; `score` is the distance-weighted trip score, 0-100.",
    parameters: {
      org_user_id: ID,
      type: '`day`, `week` (ISO weeks, Monday to Sunday) or `month`.',
      startTime: 'First day of the range, `YYYY-MM-DD`.',
      endTime: 'Last day of the range, inclusive, `YYYY-MM-DD`.',
    },
    example: {
      ...identity,
      statistics: [
        {
          startTime: '2026-11-16 00:00:00',
          endTime: '2026-11-22 23:59:59',
          mileageInMeters: 207386,
          eventCount: 63,
          avgSpeedInKmh: 51.94,
          maxSpeedInKmh: 150.01,
          durationInSeconds: 14374,
          score: 73.56,
        },
      ],
    },
  },
  'POST /v1/org-user/{org_user_id}/token': {
    operationId: 'issueToken',
    tag: 'Passport',
    summary: 'Issue a passport token',
    description:
      "Creates the account when the user has none, then issues a new token (valid 7 days; earlier tokens stay valid until they expire). Give the token to your app's SDK: it uploads trips with it. `platformUserId` is the user's id in every answer (`userId`).",
    parameters: { org_user_id: ID },
    example: {
      code: 0,
      message: 'success',
      token: 'pt_MhbWjiKnLZFxbxMD_kh1sE5Y-lDysDqmhtH9sBjP888',
      platformUserId: 8619952687728938,
    },
  },
  'DELETE /v1/org-user/{org_user_id}': {
    operationId: 'deleteUser',
    tag: 'Passport',
    summary: 'Delete a user and all their data',
    description:
      "Ends the user's tokens and stops serving their data at once; the next job run removes every copy of their trips (warehouse, raw points, snapshots, archived files). Durable before it answers: a 503 `storage_unavailable` means nothing changed, retry.",
    parameters: { org_user_id: ID },
    example: { code: 0, message: 'success', platformUserId: 8619952687728938 },
  },
  'GET /v1/token/{token}': {
    operationId: 'getTokenHolder',
    tag: 'Passport',
    summary: 'Who holds a passport token',
    description:
      'The user a valid token of your app belongs to; an unknown, expired or revoked token, or one of another app, is a 404 `token_not_found`.',
    parameters: { token: 'A token from POST /v1/org-user/{org_user_id}/token.' },
    example: { platformUserId: 8619952687728938, orgUserId: 'driver-00001' },
  },
  'POST /v1/sdk/trips': {
    operationId: 'uploadTrips',
    tag: 'SDK',
    summary: 'Upload trip records (the SDK)',
    description:
      "The SDK uploads one trip record or an array of at most 500 (8 MiB), with `Authorization: Bearer <passport token>`. Records are judged one by one: the ones that break a record-level rule come back in `rejected` with the load's reason code, the others are durably written before the 202 and loaded by the next load job. The identity comes from the token. 400 when no record is valid. The record format: docs/record-format.md.",
    example: {
      code: 0,
      message: 'accepted',
      accepted: 1,
      rejected: [{ index: 1, tripId: 'trip-0002', reason: 'invalid_os' }],
    },
    requestBody: {
      required: true,
      description:
        'One trip record, or an array of at most 500. Identity fields (appId, platformUserId, orgUserId) are taken from the token.',
      content: {
        'application/json': {
          schema: {
            oneOf: [
              { $ref: '#/components/schemas/TripRecord' },
              { type: 'array', minItems: 1, maxItems: 500, items: { $ref: '#/components/schemas/TripRecord' } },
            ],
          },
        },
      },
    },
  },
  'GET /healthz': {
    operationId: 'getHealth',
    tag: 'Health',
    summary: 'Liveness',
    description: '200 while the process answers requests.',
    example: { status: 'ok' },
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    tag: 'Health',
    summary: 'Readiness: the snapshot being served',
    description:
      'Whether a snapshot is served and how: `status` `ready` or `stale` (the newest snapshot could not be opened; the previous one serves), 503 `not_ready` until the first publish. `serving` is `pack` or `sql`; `pageCache` tells whether the serving pack has been read into memory; `reason` is a stable code when something is wrong; `damaged` lists the published files found damaged (their requests get 503 `data_unavailable` until the next load rebuilds them); `landing` counts the input files waiting for the load (and the age of the oldest, in seconds) the files it set aside under `landing/failed/` (unreadable, or their change failed a check) and the entries it refuses to take (`refused`: links, FIFOs, folders named like input files, left alone).',
    example: {
      status: 'ready',
      snapshot: 'b@31',
      slot: 'b',
      version: 31,
      serving: 'pack',
      pageCache: 'warm',
      landing: { waiting: 0, oldestWaitingSeconds: null, failed: 0, refused: 0 },
    },
  },
  'GET /v1/openapi.json': {
    operationId: 'getOpenApi',
    tag: 'Health',
    summary: 'This document',
    description: "The OpenAPI 3.1 document of the API, generated from the routes' own schemas.",
  },
  'GET /docs': {
    operationId: 'getDocs',
    tag: 'Health',
    summary: 'The API reference, rendered',
    description: 'An HTML page rendering this document (Swagger UI, served from the service itself).',
  },
};
