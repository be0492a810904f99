export interface LatLng {
  lat: number;
  lng: number;
}

const CENTRES: Readonly<Record<string, LatLng>> = {
  'Europe/Berlin': { lat: 52.52, lng: 13.405 },
  'Europe/London': { lat: 51.5074, lng: -0.1278 },
  'Europe/Paris': { lat: 48.8566, lng: 2.3522 },
  'America/New_York': { lat: 40.7128, lng: -74.006 },
  'America/Los_Angeles': { lat: 34.0522, lng: -118.2437 },
  'Asia/Shanghai': { lat: 31.2304, lng: 121.4737 },
  'Asia/Tokyo': { lat: 35.6762, lng: 139.6503 },
};

const MUNICH: LatLng = { lat: 48.1351, lng: 11.582 };

/**
 * A city in the app's zone for users to live around; Munich for zones not listed.
 *
 * @example cityCentre('Asia/Shanghai'); // { lat: 31.2304, lng: 121.4737 }
 */
export function cityCentre(timeZone: string): LatLng {
  return CENTRES[timeZone] ?? MUNICH;
}
