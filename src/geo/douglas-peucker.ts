/** Earth radius of decisions 4 (the same one the mileage uses). */
const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

export interface LatLng {
  lat: number;
  lng: number;
}

/**
 * Positions in metres on an equirectangular projection centred on the first point (decisions 7,
 * "Route"): x east, y north. Longitude differences are taken the short way round, so a trip over
 * the antimeridian is not stretched across the globe.
 */
export function project(points: readonly LatLng[]): { x: Float64Array; y: Float64Array } {
  const x = new Float64Array(points.length);
  const y = new Float64Array(points.length);
  const origin = points[0];
  if (!origin) return { x, y };
  const cosLat = Math.cos(origin.lat * RAD);
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as LatLng;
    let dLng = p.lng - origin.lng;
    if (dLng > 180) dLng -= 360;
    else if (dLng < -180) dLng += 360;
    x[i] = EARTH_RADIUS_M * dLng * RAD * cosLat;
    y[i] = EARTH_RADIUS_M * (p.lat - origin.lat) * RAD;
  }
  return { x, y };
}

/** Distance in metres from point p to the segment a-b (to a when a and b coincide). */
function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / length2));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/**
 * Indexes of the points Douglas–Peucker keeps at `toleranceM` metres, ascending: the first and
 * last always; between two kept points, the farthest point from their segment is kept when it is
 * farther than the tolerance, recursively. `toleranceM` 0 keeps every point (also collinear ones).
 * An explicit stack instead of recursion: a long straight trip must not exhaust the call stack.
 *
 * @example simplifyIndexes([{lat: 0, lng: 0}, {lat: 0, lng: 0.00001}, {lat: 0, lng: 0.001}], 5) // [0, 2]
 */
export function simplifyIndexes(points: readonly LatLng[], toleranceM: number): number[] {
  const n = points.length;
  if (toleranceM <= 0 || n <= 2) return Array.from({ length: n }, (_, i) => i);
  const { x, y } = project(points);
  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  const stack: number[] = [0, n - 1];
  while (stack.length > 0) {
    const last = stack.pop() as number;
    const first = stack.pop() as number;
    let farthest = -1;
    let farthestDistance = toleranceM;
    for (let i = first + 1; i < last; i++) {
      const d = segmentDistance(x[i] as number, y[i] as number, x[first] as number, y[first] as number, x[last] as number, y[last] as number);
      if (d > farthestDistance) {
        farthest = i;
        farthestDistance = d;
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
