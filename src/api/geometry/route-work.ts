import { setImmediate as nextTurn } from 'node:timers/promises';
import { Simplification } from '../../geo/douglas-peucker.js';
import { isShared, type RoutePoints } from '../../route/route-file.js';
import { ApiError } from '../http/errors.js';
import { routeJson, routeJsonInChunks, type RouteAnswer } from './route-geojson.js';

/** How much work one route may take, counted (docs/api-route.md, "Bounded work"). */
export interface RouteWorkLimits {
  /** Distance evaluations one simplification may spend in all; beyond it the answer is 503 busy. */
  routeWorkBudget: number;
  /** Distance evaluations between two turns of the event loop. */
  routeWorkSlice: number;
  /** Routes whose work spans turns of the event loop at once; the next such one is 503 busy. */
  routeWorkConcurrent: number;
  /** Retry-After of a 503 busy, in seconds. */
  overloadRetryAfterSeconds: number;
}

/** Routes worked on across turns of the event loop in this process, every server's together. */
let inProgress = 0;
export const routesInProgress = (): number => inProgress;

/** Positions written per turn of the event loop: a chunk short enough that other requests wait little behind it. */
export const POSITIONS_PER_CHUNK = 4096;

/**
 * Renders routes so that none holds the event loop for long, whatever its trip: the
 * simplification runs `routeWorkSlice` evaluations at a time, yielding between slices, and gives up
 * with 503 `busy` once it has spent `routeWorkBudget`; a long answer is written in chunks. A route
 * that finishes within one slice and has few positions (nearly all of them) is answered in the
 * same turn, from the shared buffers, as before; one that goes on takes its own copies of the
 * points first, and holds one of `routeWorkConcurrent` places while it does.
 */
export class RouteWork {
  /** Routes being worked on across turns of the event loop now. */
  pending = 0;

  constructor(
    private readonly limits: RouteWorkLimits,
    private readonly pause: () => Promise<void> = () => nextTurn(),
  ) {}

  /**
   * The answer's JSON: one string, or a long one as UTF-8 pieces to send one after the other. Runs synchronously up to its first pause, so `points` (views into a
   * buffer the next route read reuses) need only be valid when it is called.
   */
  async render(answer: RouteAnswer, points: RoutePoints, toleranceM: number): Promise<string | Buffer[]> {
    const { routeWorkBudget: budget, routeWorkSlice: slice } = this.limits;
    const dp = new Simplification(points.lat, points.lng, toleranceM);
    let done = dp.run(Math.min(slice, budget));
    if (done) {
      const kept = dp.indexes();
      if (kept.length <= POSITIONS_PER_CHUNK) return routeJson(answer, points, kept, toleranceM);
    }
    if (!done && dp.evaluations >= budget) throw this.overBudget();
    if (this.pending >= this.limits.routeWorkConcurrent)
      throw this.busy('as many long routes are being worked on as the service takes at once');
    this.pending += 1;
    inProgress += 1;
    try {
      // from here on other requests run between the slices: nothing shared may be kept
      dp.detach();
      const own = isShared(points) ? copyOf(points) : points;
      while (!done) {
        await this.pause();
        done = dp.run(Math.min(slice, budget - dp.evaluations));
        if (!done && dp.evaluations >= budget) throw this.overBudget();
      }
      const kept = dp.indexes();
      if (kept.length <= POSITIONS_PER_CHUNK) return routeJson(answer, own, kept, toleranceM);
      await this.pause();
      return await routeJsonInChunks(answer, own, kept, toleranceM, POSITIONS_PER_CHUNK, this.pause);
    } finally {
      this.pending -= 1;
      inProgress -= 1;
    }
  }

  private overBudget(): ApiError {
    return this.busy(
      `simplifying this trip at tolerance takes more work than one request may (${this.limits.routeWorkBudget} distance evaluations); tolerance=0 returns every point without it`,
    );
  }

  private busy(why: string): ApiError {
    return new ApiError('busy', `the route cannot be answered now: ${why}; retry after the time in Retry-After`, {
      'retry-after': String(this.limits.overloadRetryAfterSeconds),
    });
  }
}

const copyOf = (p: RoutePoints): RoutePoints => ({
  t: p.t.slice(),
  lat: p.lat.slice(),
  lng: p.lng.slice(),
  speed: p.speed.slice(),
});
