export interface GeneratedUser {
  orgUserId: string;
  platformUserId: number;
}

export interface GenerateOptions {
  /** Created if missing. */
  outDir: string;
  appId: string;
  /** IANA zone of the app; trips are placed in local time of this zone. */
  timeZone: string;
  users: GeneratedUser[];
  /** Number of days, ending at endDate (inclusive). */
  days: number;
  /** 'YYYY-MM-DD', the last local day. */
  endDate: string;
  seed: number;
  format: 'ndjson' | 'parquet';
  /** Also write bad-records.ndjson: rejected lines, and trips carrying bad points and events. */
  badRecords: boolean;
  onProgress?: (message: string) => void;
  /** Trips built and written at a time (default env DRIVING_GENERATE_PART_TRIPS, 250): bounds memory, never changes a byte. */
  tripsPerPart?: number;
}

export interface GenerateSummary {
  /** Absolute paths written. */
  files: string[];
  /** Well-formed trip records written (bad lines excluded; trips carrying bad points included). */
  trips: number;
  /** Point entries in those records, including the ones the loader must drop. */
  points: number;
  /** Event entries in those records, including the ones the loader must quarantine. */
  events: number;
  abnormalTrips: number;
  badLines: number;
  badByReason: Record<string, number>;
  droppedPointsByReason: Record<string, number>;
  quarantinedEventsByReason: Record<string, number>;
}

/** A trip record as written (the loader's input shape). */
export interface TripRecord {
  [field: string]: unknown;
  tripId: string;
  startTime: string | number;
  endTime: string | number;
  points: TripPoint[];
  events: TripEvent[];
}

export interface TripPoint {
  t: number | null;
  lat: number | string | null;
  lng: number | string | null;
  speed: number | string | null;
  heading?: number;
  accuracy?: number;
}

export interface TripEvent {
  type: string;
  startTime?: string;
  endTime?: string;
  startPoint?: { lat: number; lng: number };
  endPoint?: { lat: number; lng: number };
  description?: string;
}
