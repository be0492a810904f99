/**
 * The serving pack: read-only files (one per section) a publish writes beside its slot, laid out for the API's
 * point lookups (one user's rows contiguous, found through a directory held in memory), because a
 * DuckDB query has a fixed cost per request and a scan of a multi-million-row table far more
 * (figures in docs/benchmarks.md), too much for 1,000 requests/s at a 10 ms p99 on two cores.
 *
 * Layout of a section file: [payloads][index: one 40-byte entry per row][footer JSON]
 * [footer length: u32][MAGIC], and beside it `<file>.extras` (EXTRAS_SUFFIX) with the extras. An
 * entry: key f64 (sort key: start time in µs, or days since 1970), aux u32 (trip id hash, or score
 * interval), payload length u32, extra length u32, unused u32, payload offset f64, extra offset f64
 * (in the extras file). Extras (a trip's events) live apart from the payloads so that a page of
 * trips is one short read and the trips a list touches stay together in the page cache; in a file
 * of their own (format 4) because appending them after the payloads wrote and read them twice more
 * (format 3), most of the I/O of a publish that copies a history.
 *
 * Format 5: a section is a stack of layers (the manifest lists them oldest first): a base and
 * deltas, each a file of this layout. A row of a newer layer replaces the same row of older ones
 * (a trip by its id, a statistics day by its day), and a user a layer lists as purged has no rows
 * in the layers below it. So a publish writes only what changed since the served pack, and merges
 * layers now and then (src/serving/layers.ts) instead of copying the history every day.
 */
export const MAGIC = 'DDSPACK5';
export const FORMAT = 5;
export const EXTRAS_SUFFIX = '.extras';
export const ENTRY_BYTES = 40;
export const SECTIONS = ['trips', 'stats', 'scores'] as const;
export type Section = (typeof SECTIONS)[number];

/**
 * The format a section's footer records: the layout's (FORMAT), or later where that section's
 * payloads changed. Scores are 6: every evaluation date (the history), by interval then oldest
 * first, in layers, each payload an array of SCORE_FIELDS (percentile, model version, multipliers
 * and contributions included). A layer of another format does not
 * open: the API serves that snapshot by SQL and the next publish writes the section anew (a section
 * that does not open is not reused).
 */
export const SECTION_FORMAT: Record<Section, number> = { trips: FORMAT, stats: FORMAT, scores: 6 };

/** A trip's payload is a JSON array of these, in this order (sql/models/serving/pack_trips.sql), named as models/serving/api_trip_list.sql and models/serving/api_trip_detail.sql name them. */
export const TRIP_FIELDS = [
  'trip_id',
  'device_id',
  'status',
  'abnormal_reason',
  'os',
  'count_events',
  'score',
  'energy_g',
  'avg_speed_kmh',
  'max_speed_kmh',
  'mileage_m',
  'duration_s',
  'coordinate',
  'is_auto_start',
  'is_auto_end',
  'start_time',
  'end_time',
  'started_us',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_poi',
  'end_poi',
] as const;

/** A score's payload is a JSON array of these, in this order (sql/models/serving/pack_scores.sql), named as models/serving/api_safety_score.sql names them. */
export const SCORE_FIELDS = [
  'evaluation_date',
  'evaluation_time',
  'start_time',
  'end_time',
  'safety_score',
  'count_trips',
  'distracted_driving',
  'evening_rush_hour',
  'acclong_abs_1',
  'weekday_driving',
  'low_speed',
  'events_per_100km',
  'percentile',
  'model_version',
  'multiplier_distracted_driving',
  'multiplier_evening_rush_hour',
  'multiplier_acclong_abs_1',
  'multiplier_weekday_driving',
  'multiplier_low_speed',
  'multiplier_events',
  'contribution_distracted_driving',
  'contribution_evening_rush_hour',
  'contribution_acclong_abs_1',
  'contribution_weekday_driving',
  'contribution_low_speed',
  'contribution_events',
] as const;

/** The fields of one event in a trip's events array (`extra`), as models/serving/api_trip_events.sql names them. */
export const EVENT_FIELDS = [
  'type',
  'description',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_time',
  'end_time',
] as const;

export interface Footer {
  format: number;
  section: Section;
  /** The warehouse version the file was written from (a later publish may reuse it unchanged). */
  version: number;
  /** The zone each app's local times were written in. */
  zones: Record<string, string>;
  indexOffset: number;
  count: number;
  apps: string[];
  /** Per user: app index, user id, first entry, entry count. */
  users: number[];
  /** Per user purged before this layer was written: app index, user id (their rows in older layers are gone). */
  purged: number[];
  /**
   * Scores: the evaluation days (days since 1970) this layer holds rows of, ascending. A date
   * scored again gets a delta of its changed rows, which replace these layers' rows of the same
   * day and interval; a score removed since makes the publish write the section whole.
   */
  days?: number[];
}

export const USER_FIELDS = 4;
export const PURGED_FIELDS = 2;

/**
 * The sections written as layers: all of them. Scores are layered since they keep every evaluation
 * date (90 nightly dates are 180 rows per driver): a night's publish writes that night's scores
 * only. A row is identified by its key and aux (a trip by its id's hash and id; a day of
 * statistics by its day; a score by its evaluation day and interval).
 */
export const LAYERED: readonly Section[] = ['trips', 'stats', 'scores'];

/** FNV-1a over UTF-16 code units: a trip id's 32-bit tag, so a detail lookup parses one row, not all. */
export function tripIdHash(tripId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tripId.length; i++) {
    h ^= tripId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Whether `a` sorts before `b` in UTF-8 byte order: how DuckDB orders VARCHAR, unlike JS's UTF-16 `<`. */
export const utf8Less = (a: string, b: string): boolean =>
  Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) < 0;
