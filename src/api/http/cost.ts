import type { FastifyRequest } from 'fastify';

/**
 * What a request costs against its app's rate limit, in units of a one-row lookup (a trip's
 * detail, a score: 1). A route declares its cost in its options, `config: { cost: N }`, or a
 * function of the request's query when the work grows with it (a page's size, a range's days);
 * a route that declares none costs 1. The query is read before it is validated, so a function
 * must take any string: what it cannot read costs 1 (the request is refused with a 400 anyway).
 * docs/api-limits.md lists every cost.
 */
export type Cost = number | ((request: FastifyRequest) => number);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Units of the app's rate limit one request of this route takes (src/api/http/cost.ts). */
    cost?: Cost;
  }
}

/** The cost of a route: a trip's route, read and simplified (about ten lookups' work at 5 m). */
export const ROUTE_COST = 10;

/** The units a request takes: its route's declared cost, a whole number of at least 1. */
export function costOf(request: FastifyRequest): number {
  const declared = request.routeOptions.config?.cost;
  const cost = typeof declared === 'function' ? declared(request) : (declared ?? 1);
  return Number.isFinite(cost) && cost >= 1 ? Math.ceil(cost) : 1;
}

const query = (request: FastifyRequest): Record<string, unknown> => (request.query ?? {}) as Record<string, unknown>;

/** A page of `limit` rows (default `defaultLimit`) costs one unit per `rowsPerUnit` rows. */
export const pageCost =
  (defaultLimit: number, rowsPerUnit: number) =>
  (request: FastifyRequest): number => {
    const raw = query(request)['limit'];
    const limit = raw === undefined ? defaultLimit : Number(raw);
    return Number.isInteger(limit) && limit > 0 ? Math.ceil(limit / rowsPerUnit) : 1;
  };

const DAY_MS = 86_400_000;
const dayOf = (value: unknown): number =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) / DAY_MS : NaN;

/**
 * A range of dates (`startTime`, `endTime`, both YYYY-MM-DD, inclusive) costs one unit per
 * `daysPerUnit` days. With a bound left out the range counts as `defaultDays` long (the history's
 * widest, 366 days): what the default range costs, an upper bound otherwise.
 */
export const rangeCost =
  (daysPerUnit: number, defaultDays: number) =>
  (request: FastifyRequest): number => {
    const q = query(request);
    const start = dayOf(q['startTime']);
    const end = dayOf(q['endTime']);
    const missing = q['startTime'] === undefined || q['endTime'] === undefined;
    const days = missing ? defaultDays : end - start + 1;
    return Number.isFinite(days) && days > 0 ? Math.ceil(days / daysPerUnit) : 1;
  };
