import 'fastify';
import type { App } from '../../apps/store.js';
import type { PassportStore } from '../../passport/store.js';
import type { AccountDeletion } from '../../passport/deletion.js';
import type { AppsCache } from '../read/apps-cache.js';
import type { CursorCodec } from '../read/cursor.js';
import type { SnapshotFollower, Snapshot } from '../read/snapshot.js';
import { ApiError } from './errors.js';
import { asUnavailable, unavailable } from '../read/damage.js';
import type { Scope } from '../read/repository.js';
import type { Credential } from './credential.js';
import type { ApiLimits } from './limits.js';
import type { WebhookService } from '../../webhooks/integrator.js';
import type { RateCounting } from './guards.js';
import type { LandingCounter } from '../../landing-status.js';
import type { FollowView } from './follow-readiness.js';
import type { UploadSink } from '../../intake/sink.js';
import type { CellServing, CellsServed } from '../read/cells.js';

/** What the routes need; built once by the server (tests build it with their own clock). */
export interface ApiContext {
  apps: AppsCache;
  passport: PassportStore;
  deletion: AccountDeletion;
  snapshots: SnapshotFollower;
  cursors: CursorCodec;
  landingDir: string;
  /** What waits in the landing area and what the load set aside (/readyz); one per process. */
  landing?: LandingCounter;
  /** Route files of the published trips (src/route/route-file.ts). */
  routesDir: string;
  now: () => Date;
  /** DRIVING_POINTS_RETENTION_DAYS, as the jobs keep routes: an upload older is warned (src/api/upload/route-retention.ts). */
  pointsRetentionDays?: number;
  limits: ApiLimits;
  /** The integrator's webhook settings and deliveries (src/webhooks/integrator.ts). */
  webhooks: WebhookService;
  /** Where rate limits count when not in this process alone (src/api/http/guards.ts). */
  rateCounting?: RateCounting;
  /** Where accepted uploads are committed (PostgreSQL, with DATABASE_URL: src/intake/); absent: the landing area. */
  uploads?: UploadSink | null;
  /** An API machine's follower of the job machine's publishes (serve.js --follow); absent on the job machine. */
  follow?: FollowView | null;
  /** With cells: the cells this process serves, each driver answered from its own (src/api/read/cells.ts); absent: one cell. */
  cells?: CellsServed | null;
  /** Where a request for a driver of a cell not served here is sent on (DRIVING_CELL_ROUTER); null: 503 cell_not_served. */
  cellRouter?: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    tenant: App;
    /** What authenticated the request, resolved before its body is read (auth.ts); null when nothing did. */
    credential: Credential | null;
  }
  interface FastifyContextConfig {
    /** How a route authenticates; every route needs an API key unless it says otherwise. */
    auth?: 'apiKey' | 'passportToken' | 'none';
    /** false: never shed with 503 under load (health probes). */
    shed?: boolean;
  }
  interface FastifySchema {
    /** One line for the OpenAPI document. */
    summary?: string;
    /** OpenAPI: the operation's name, its group, and a paragraph about it. */
    operationId?: string;
    tags?: string[];
    description?: string;
  }
}

/** The calling app's current account for `orgUserId`, or a 404 (another app's user does not exist). */
export async function scopeFor(
  ctx: ApiContext,
  tenant: App,
  orgUserId: string,
): Promise<Scope & { orgUserId: string }> {
  const account = await ctx.passport.activeAccountCell(tenant.appId, orgUserId);
  if (account === null) throw new ApiError('user_not_found', `org_user_id: no user '${orgUserId}'`);
  return {
    appId: tenant.appId,
    userId: account.userId,
    zone: tenant.timeZone,
    orgUserId,
    cell: account.cell,
    ...(account.moving ? { moving: account.moving } : {}),
  };
}

/** A driver of a cell this process does not serve: sent on to one that does, or 503 (src/api/http/cell-forward.ts). */
export class CellNotServed extends ApiError {
  constructor(readonly cell: string) {
    super(
      'cell_not_served',
      `this machine does not serve cell '${cell}', which holds the user's data: ask one that does`,
    );
  }
}

/**
 * Where a driver's data is served from: its cell's snapshots. A cell this process does not serve
 * is a 503 `cell_not_served` (the balancer sends a driver's requests to a machine holding its
 * cell: deploy/haproxy-cells.cfg); without cells, the one snapshot.
 */
export function servingOf(ctx: ApiContext, scope?: Pick<Scope, 'cell' | 'moving'>): CellServing {
  const cells = ctx.cells;
  if (!cells) return { snapshots: ctx.snapshots, routesDir: ctx.routesDir };
  const cell = movingFrom(cells, scope) ?? scope?.cell ?? null;
  if (cell === null) return cells.fallback;
  const serving = cells.byName.get(cell);
  if (!serving) throw new CellNotServed(cell);
  return serving;
}

/**
 * A moving driver is answered from the cell it comes from until this machine's copy of its new cell
 * serves the version that holds it (docs/decisions.md, Cells), where this machine serves both.
 */
function movingFrom(cells: CellsServed, scope?: Pick<Scope, 'cell' | 'moving'>): string | null {
  const moving = scope?.moving;
  if (!moving || !cells.byName.has(moving.from)) return null;
  const target = scope?.cell ? cells.byName.get(scope.cell) : undefined;
  if (!target) return moving.from;
  const served = target.snapshots.manifest?.version ?? 0;
  return moving.arrivedVersion !== null && served >= moving.arrivedVersion ? null : moving.from;
}

/**
 * Runs a read on the current snapshot (of the scope's cell, whose route files it is given with it,
 * chosen once); 503 before the first publish, and for a damaged file it needs (damage.ts).
 */
export async function onSnapshot<T>(
  ctx: ApiContext,
  fn: (s: Snapshot, serving: CellServing) => Promise<T>,
  scope?: Pick<Scope, 'cell' | 'moving'>,
): Promise<T> {
  const serving = servingOf(ctx, scope);
  const { snapshots } = serving;
  const result = await snapshots.use(async (s) => {
    try {
      return await fn(s, serving);
    } catch (error) {
      throw asUnavailable(s, error);
    }
  });
  if (result === null)
    throw snapshots.damaged.list().length > 0
      ? unavailable()
      : new ApiError('not_ready', 'no data has been published yet');
  return result.value;
}

export const round = (value: unknown, places: number): number => {
  const f = 10 ** places;
  return Math.round(Number(value) * f) / f;
};

export const point = (lat: unknown, lng: unknown): { lng: number; lat: number } => ({
  lng: lng === null || lng === undefined ? 0 : Number(lng),
  lat: lat === null || lat === undefined ? 0 : Number(lat),
});
