/** Earth radius of decisions 4 (the same one the mileage uses). */
const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/**
 * Positions in metres on an equirectangular projection centred on the first point (decisions 7,
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
 * Working space reused by every call (the function is synchronous): a one-hour trip would
 * otherwise allocate 61 kB outside V8's heap per call, which at a few hundred calls a second makes
 * V8 run full collections for the external memory alone.
 */
let scratch = { x: new Float64Array(4096), y: new Float64Array(4096), keep: new Uint8Array(4096) };

function scratchFor(n: number): typeof scratch {
  if (scratch.x.length < n) {
    let size = scratch.x.length;
    while (size < n) size *= 2;
    scratch = { x: new Float64Array(size), y: new Float64Array(size), keep: new Uint8Array(size) };
  }
  return scratch;
}

/**
 * Indexes of the points Douglas–Peucker keeps at `toleranceM` metres, ascending: the first and
 * last always; between two kept points, the point farthest from their segment (distance to the
 * segment, not the line; the earliest of equals) is kept when it is farther than the tolerance,
 * recursively. `toleranceM` 0 keeps every point (also collinear ones). Squared distances and an
 * explicit stack: no square root per point, and a long trip cannot exhaust the call stack.
 *
 * @example simplifyIndexes([0, 0, 0], [0, 0.00001, 0.001], 5) // [0, 2]
 */
export function simplifyIndexes(lat: ArrayLike<number>, lng: ArrayLike<number>, toleranceM: number): number[] {
  const n = lat.length;
  if (toleranceM <= 0 || n <= 2) return Array.from({ length: n }, (_, i) => i);
  const { x, y, keep } = scratchFor(n);
  projectInto(lat, lng, x, y);
  keep.fill(0, 0, n);
  const tolerance2 = toleranceM * toleranceM;
  keep[0] = 1;
  keep[n - 1] = 1;
  const stack: number[] = [0, n - 1];
  while (stack.length > 0) {
    const last = stack.pop() as number;
    const first = stack.pop() as number;
    const ax = x[first] as number;
    const ay = y[first] as number;
    const dx = (x[last] as number) - ax;
    const dy = (y[last] as number) - ay;
    const length2 = dx * dx + dy * dy;
    let farthest = -1;
    let farthest2 = tolerance2;
    for (let i = first + 1; i < last; i++) {
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
    if (farthest < 0) continue;
    keep[farthest] = 1;
    stack.push(first, farthest, farthest, last);
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (keep[i]) out.push(i);
  return out;
}
