/** Builds trip records (docs/decisions.md, "Trip records") for tests: 1 Hz points heading north at a given speed. */
export interface TripSpec {
  appId: string;
  tripId: string;
  userId?: number;
  orgUserId?: string;
  start: string; // ISO with offset
  seconds: number;
  /** speed in m/s at second i */
  speed?: (i: number) => number;
  events?: { type: string; from: number; to: number }[];
  extra?: Record<string, unknown>;
}

export function tripRecord(spec: TripSpec): Record<string, unknown> {
  const startMs = Date.parse(spec.start);
  const speed = spec.speed ?? (() => 12);
  const points: { t: number; lat: number; lng: number; speed: number }[] = [];
  let lat = 52.5;
  for (let i = 0; i <= spec.seconds; i++) {
    points.push({ t: startMs + i * 1000, lat, lng: 13.4, speed: speed(i) });
    lat += speed(i) / 111_195; // metres north per second, in degrees
  }
  const at = (second: number) => new Date(startMs + second * 1000).toISOString();
  const pointAt = (second: number) => ({ lat: points[Math.min(second, points.length - 1)]!.lat, lng: 13.4 });
  return {
    appId: spec.appId,
    platformUserId: spec.userId ?? 1001,
    orgUserId: spec.orgUserId ?? 'driver-1',
    tripId: spec.tripId,
    os: 'android',
    startTime: spec.start,
    endTime: new Date(startMs + spec.seconds * 1000).toISOString(),
    points,
    events: (spec.events ?? []).map((e) => ({
      type: e.type,
      startTime: at(e.from),
      endTime: at(e.to),
      startPoint: pointAt(e.from),
      endPoint: pointAt(e.to),
    })),
    ...spec.extra,
  };
}

/**
 * Raw events as an SDK might send them, at 2026-11-19T08:00:10Z..: one of an unknown type
 * (`drifting`: quarantined as unknown_event_type), one ending before it starts (event_time_inverted),
 * and, with `valid`, one that loads.
 */
export function badEvents(valid = false): Record<string, unknown>[] {
  const at = { startPoint: { lat: 1, lng: 1 }, endPoint: { lat: 1, lng: 1 } };
  return [
    { type: 'drifting', startTime: '2026-11-19T08:00:10Z', endTime: '2026-11-19T08:00:20Z', ...at },
    { type: 'brake', startTime: '2026-11-19T08:00:20Z', endTime: '2026-11-19T08:00:10Z', ...at },
    ...(valid ? [{ type: 'brake', startTime: '2026-11-19T08:00:20Z', endTime: '2026-11-19T08:00:21Z', ...at }] : []),
  ];
}
