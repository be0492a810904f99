/** JSON schemas shared by the routes; they validate input, serialise output and feed OpenAPI. */
export const Coordinate = {
  type: 'object',
  required: ['lng', 'lat'],
  properties: { lng: { type: 'number' }, lat: { type: 'number' } },
} as const;

export const ErrorResult = {
  type: 'object',
  required: ['code', 'error', 'message', 'requestId'],
  properties: {
    code: { type: 'integer' },
    error: { type: 'string' },
    message: { type: 'string' },
    requestId: { type: 'string' },
  },
} as const;

export const OrgUserParams = {
  type: 'object',
  required: ['org_user_id'],
  properties: {
    org_user_id: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: "The integrator's id of the driver (the account `POST /v1/org-user/{org_user_id}/token` creates).",
    },
  },
} as const;

/** Every operation may answer these (429 rate_limited and 503 overloaded: docs/api-limits.md). */
export const errorResponses = {
  400: ErrorResult,
  401: ErrorResult,
  404: ErrorResult,
  429: ErrorResult,
  500: ErrorResult,
  503: ErrorResult,
} as const;

const tripCommon = {
  tripId: { type: 'string' },
  deviceId: { type: 'string' },
  status: { type: 'string' },
  score: { type: 'number' },
  energy: { type: 'integer' },
  mileageInMeters: { type: 'integer' },
  durationInSeconds: { type: 'integer' },
  startTime: { type: 'string' },
  endTime: { type: 'string' },
  startPoint: Coordinate,
  endPoint: Coordinate,
  startPoi: { type: 'string' },
  endPoi: { type: 'string' },
} as const;

export const TripBrief = {
  type: 'object',
  required: [
    'tripId',
    'deviceId',
    'status',
    'eventCount',
    'score',
    'energy',
    'mileageInMeters',
    'durationInSeconds',
    'startTime',
    'endTime',
    'startPoint',
    'endPoint',
  ],
  properties: { ...tripCommon, eventCount: { type: 'integer' } },
} as const;

export const Event = {
  type: 'object',
  required: ['startPoint', 'endPoint', 'type', 'startTime', 'endTime', 'description'],
  properties: {
    startPoint: Coordinate,
    endPoint: Coordinate,
    type: { type: 'string' },
    startTime: { type: 'string' },
    endTime: { type: 'string' },
    description: { type: 'string' },
  },
} as const;

export const TripDetail = {
  type: 'object',
  required: [
    'tripId',
    'deviceId',
    'status',
    'abnormalReason',
    'os',
    'score',
    'energy',
    'avgSpeedInKmh',
    'maxSpeedInKmh',
    'mileageInMeters',
    'durationInSeconds',
    'startTime',
    'endTime',
    'coordinate',
    'startPoint',
    'endPoint',
    'isAutoStart',
    'isAutoEnd',
    'events',
  ],
  properties: {
    ...tripCommon,
    abnormalReason: {
      type: 'string',
      enum: [
        '',
        'time_inverted',
        'too_few_points',
        'speed_implausible',
        'speed_inconsistent',
        'too_short',
        'overlapping_trip',
      ],
    },
    os: { type: 'string' },
    avgSpeedInKmh: { type: 'number' },
    maxSpeedInKmh: { type: 'number' },
    coordinate: { type: 'string' },
    isAutoStart: { type: 'boolean' },
    isAutoEnd: { type: 'boolean' },
    events: { type: 'array', items: Event },
  },
} as const;

export const identity = {
  appId: { type: 'string' },
  userId: { type: 'integer' },
  orgUserId: { type: 'string' },
} as const;
