/** The ErrorResult of docs/decisions.md, API: `{code, error, message, requestId}`. */
export const ERRORS = {
  invalid_parameter: { status: 400, code: 40001 },
  malformed_request: { status: 400, code: 40002 },
  unauthorized: { status: 401, code: 40101 },
  user_not_found: { status: 404, code: 40401 },
  trip_not_found: { status: 404, code: 40402 },
  score_not_available: { status: 404, code: 40403 },
  token_not_found: { status: 404, code: 40404 },
  route_not_found: { status: 404, code: 40405 },
  route_not_available: { status: 404, code: 40406 },
  endpoint_not_found: { status: 404, code: 40407 },
  event_not_found: { status: 404, code: 40408 },
  request_timeout: { status: 408, code: 40801 },
  payload_too_large: { status: 413, code: 41301 },
  unsupported_media_type: { status: 415, code: 41501 },
  rate_limited: { status: 429, code: 42901 },
  headers_too_large: { status: 431, code: 43101 },
  not_ready: { status: 503, code: 50301 },
  storage_unavailable: { status: 503, code: 50302 },
  overloaded: { status: 503, code: 50303 },
  data_unavailable: { status: 503, code: 50304 },
  busy: { status: 503, code: 50305 },
  storage_full: { status: 503, code: 50306 },
  cell_not_served: { status: 503, code: 50307 },
  internal_error: { status: 500, code: 50001 },
} as const;

export type ErrorName = keyof typeof ERRORS;

export class ApiError extends Error {
  readonly status: number;
  readonly code: number;

  constructor(
    readonly error: ErrorName,
    message: string,
    /** Sent with the answer (Retry-After). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.status = ERRORS[error].status;
    this.code = ERRORS[error].code;
  }
}

export const invalid = (parameter: string, why: string): ApiError =>
  new ApiError('invalid_parameter', `${parameter}: ${why}`);
