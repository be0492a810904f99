export interface LatLng {
  lat: number;
  lng: number;
}

const CENTRES: Record<string, LatLng> = {
  'Europe/Berlin': { lat: 52.5200, lng: 13.4050 },
  'Europe/London': { lat: 51.5074, lng: -0.1278 },
  'Europe/Paris': { lat: 48.8566, lng: 2.3522 },
  'America/New_York': { lat: 40.7128, lng: -74.0060 },
  'America/Los_Angeles': { lat: 34.0522, lng: -118.2437 },
  'Asia/Shanghai': { lat: 31.2304, lng: 121.4737 },
  'Asia/Tokyo': { lat: 35.6762, lng: 139.6503 },
  'UTC': { lat: 48.1351, lng: 11.5820 },
};

/** A city in the app's zone around which users live; Munich when the zone is not listed. */
export function cityCentre(timeZone: string): LatLng {
  return CENTRES[timeZone] ?? (CENTRES['UTC'] as LatLng);
}
