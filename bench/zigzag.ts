/** One point a second of a crafted trip: time (epoch ms), degrees, reported speed in m/s. */
export interface ZigzagPoint {
  t: number;
  lat: number;
  lng: number;
  speed: number;
}

const EARTH_RADIUS_M = 6_371_008.8;
const M_PER_DEG = (EARTH_RADIUS_M * Math.PI) / 180;

/**
 * The worst case of Douglas–Peucker: `n` points a second apart, 10 m east each, every odd one
 * `maxOffsetM · i / n` metres north of the line. The odd points then lie on the chord from the
 * first point to any odd point, and the even point next to the end is always the farthest: every
 * split keeps one point next to an end, so the work is about n²/2 distance evaluations. Every
 * step stays below 250 km/h (no point is a position spike) and each reported speed is what the
 * positions imply, so the trip is as plausible as the load requires.
 */
export function zigzag(n: number, startMs: number, maxOffsetM = 50, lat0 = 52.5, lng0 = 13.4): ZigzagPoint[] {
  const kx = M_PER_DEG * Math.cos((lat0 * Math.PI) / 180);
  const points: ZigzagPoint[] = [];
  for (let i = 0; i < n; i++) {
    const north = i % 2 === 1 ? (maxOffsetM * i) / n : 0;
    points.push({ t: startMs + i * 1000, lat: lat0 + north / M_PER_DEG, lng: lng0 + (10 * i) / kx, speed: 0 });
  }
  for (let i = 0; i < n; i++) {
    const a = points[i] as ZigzagPoint;
    const b = points[Math.min(i + 1, n - 1)] as ZigzagPoint;
    const dNorth = (b.lat - a.lat) * M_PER_DEG;
    const dEast = (b.lng - a.lng) * kx;
    a.speed = Math.round(Math.hypot(dNorth, dEast) * 100) / 100;
  }
  return points;
}
