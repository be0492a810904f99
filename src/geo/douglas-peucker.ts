/** Earth radius of docs/decisions.md, Trip records (load) (the same one the mileage uses). */
const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/**
 * Positions in metres on an equirectangular projection centred on the first point (docs/decisions.md, Statistics and scores,
 * "Route"), written into `x` and `y`: x east, y north. Longitude differences are taken the short
 * way round, so a trip over the antimeridian is not stretched across the globe.
 */
function projectInto(lat: ArrayLike<number>, lng: ArrayLike<number>, x: Float64Array, y: Float64Array): void {
  const n = lat.length;
  if (n === 0) return;
  const lat0 = lat[0] as number;
  const lng0 = lng[0] as number;
  const kx = EARTH_RADIUS_M * RAD * Math.cos(lat0 * RAD);
  const ky = EARTH_RADIUS_M * RAD;
  for (let i = 0; i < n; i++) {
    let dLng = (lng[i] as number) - lng0;
    if (dLng > 180) dLng -= 360;
    else if (dLng < -180) dLng += 360;
    x[i] = kx * dLng;
    y[i] = ky * ((lat[i] as number) - lat0);
  }
}

/**
 * Working space reused by every simplification that runs to its end in one go: a one-hour trip
 * would otherwise allocate 61 kB outside V8's heap per call, which at a few hundred calls a second
 * makes V8 run full collections for the external memory alone. One that pauses takes its own copy
 * first (`detach`).
 */
let scratch = { x: new Float64Array(4096), y: new Float64Array(4096), keep: new Uint8Array(4096) };
/** Longer trips get arrays of their own. */
const SCRATCH_MAX_POINTS = 16_384;

function scratchFor(n: number): typeof scratch {
  if (scratch.x.length < n) {
    let size = scratch.x.length;
    while (size < n) size *= 2;
    scratch = { x: new Float64Array(size), y: new Float64Array(size), keep: new Uint8Array(size) };
  }
  return scratch;
}

/**
 * Douglas–Peucker at `toleranceM` metres as work that can stop and resume: the first and last
 * points are kept; between two kept points, the point farthest from their segment (distance to the
 * segment, not the line; the earliest of equals) is kept when it is farther than the tolerance,
 * recursively. `toleranceM` 0 keeps every point (also collinear ones). Squared distances and an
 * explicit stack: no square root per point, and a long trip cannot exhaust the call stack.
 *
 * Its cost is counted in distance evaluations (`evaluations`), one per point tested against a
 * segment: about n·log n on a real trip, but n²/2 on a zig-zag whose farthest point is always next
 * to an end. `run(max)` stops after at most `max` more evaluations, mid-segment if need be, and the
 * next call goes on from there: the kept points are the same however the work is cut.
 */
export class Simplification {
  /** Distance evaluations so far. */
  evaluations = 0;
  private readonly n: number;
  private x: Float64Array;
  private y: Float64Array;
  private keep: Uint8Array;
  private readonly tolerance2: number;
  private readonly stack: number[] = [];
  /** The segment being scanned: its ends, the next point to test, the farthest so far. */
  private first = -1;
  private last = -1;
  private next = 0;
  private farthest = -1;
  private farthest2 = 0;
  private finished: boolean;

  constructor(lat: ArrayLike<number>, lng: ArrayLike<number>, toleranceM: number) {
    this.n = lat.length;
    this.tolerance2 = toleranceM * toleranceM;
    this.finished = toleranceM <= 0 || this.n <= 2;
    if (this.finished) {
      this.x = this.y = new Float64Array(0);
      this.keep = new Uint8Array(0);
      return;
    }
    // a long trip is likely to pause: its own arrays spare the copy `detach` would make
    ({
      x: this.x,
      y: this.y,
      keep: this.keep,
    } = this.n > SCRATCH_MAX_POINTS
      ? { x: new Float64Array(this.n), y: new Float64Array(this.n), keep: new Uint8Array(this.n) }
      : scratchFor(this.n));
    projectInto(lat, lng, this.x, this.y);
    this.keep.fill(0, 0, this.n);
    this.keep[0] = 1;
    this.keep[this.n - 1] = 1;
    this.stack.push(0, this.n - 1);
  }

  get done(): boolean {
    return this.finished;
  }

  /** Copies the working space out of the shared scratch: needed before anything else may simplify. */
  detach(): void {
    if (this.finished || this.x !== scratch.x) return;
    this.x = this.x.slice(0, this.n);
    this.y = this.y.slice(0, this.n);
    this.keep = this.keep.slice(0, this.n);
  }

  /** Works until done or `maxEvaluations` more evaluations are spent; true when done. */
  run(maxEvaluations: number): boolean {
    const { x, y, keep, tolerance2, stack } = this;
    const stop = this.evaluations + maxEvaluations;
    while (!this.finished) {
      if (this.first < 0) {
        if (stack.length === 0) {
          this.finished = true;
          break;
        }
        this.last = stack.pop() as number;
        this.first = stack.pop() as number;
        this.next = this.first + 1;
        this.farthest = -1;
        this.farthest2 = tolerance2;
      }
      const first = this.first;
      const last = this.last;
      const ax = x[first] as number;
      const ay = y[first] as number;
      const dx = (x[last] as number) - ax;
      const dy = (y[last] as number) - ay;
      const length2 = dx * dx + dy * dy;
      let farthest = this.farthest;
      let farthest2 = this.farthest2;
      const end = Math.min(last, this.next + Math.max(0, stop - this.evaluations));
      for (let i = this.next; i < end; i++) {
        const px = (x[i] as number) - ax;
        const py = (y[i] as number) - ay;
        // the nearest point of the segment: its start when the segment has no length
        let t = length2 === 0 ? 0 : (px * dx + py * dy) / length2;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        const ex = px - t * dx;
        const ey = py - t * dy;
        const d2 = ex * ex + ey * ey;
        if (d2 > farthest2) {
          farthest = i;
          farthest2 = d2;
        }
      }
      this.evaluations += end - this.next;
      this.next = end;
      this.farthest = farthest;
      this.farthest2 = farthest2;
      if (end < last) return false;
      this.first = -1;
      if (farthest < 0) continue;
      keep[farthest] = 1;
      stack.push(first, farthest, farthest, last);
      if (this.evaluations >= stop && stack.length > 0) return false;
    }
    return true;
  }

  /** The kept indexes, ascending; only once done. */
  indexes(): number[] {
    if (!this.finished) throw new Error('the simplification has not finished');
    const n = this.n;
    const out: number[] = [];
    if (this.keep.length === 0) {
      for (let i = 0; i < n; i++) out.push(i);
      return out;
    }
    for (let i = 0; i < n; i++) if (this.keep[i]) out.push(i);
    return out;
  }
}

/**
 * Indexes of the points Douglas–Peucker keeps at `toleranceM` metres, ascending, in one go
 * (see `Simplification`: use that where the work must be bounded).
 *
 * @example simplifyIndexes([0, 0, 0], [0, 0.00001, 0.001], 5) // [0, 2]
 */
export function simplifyIndexes(lat: ArrayLike<number>, lng: ArrayLike<number>, toleranceM: number): number[] {
  const dp = new Simplification(lat, lng, toleranceM);
  dp.run(Infinity);
  return dp.indexes();
}
