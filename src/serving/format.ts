/**
 * The serving pack: read-only files (one per section) a publish writes beside its slot, laid out for the API's
 * point lookups (one user's rows contiguous, found through a directory held in memory), because a
 * DuckDB query costs at least 0.4 ms and a scan of a multi-million-row table several ms (figures in
 * docs/benchmarks.md), which cannot give 1,000 requests/s at a 10 ms p99 on two cores.
 *
 * Layout of a section file: [payloads][index: one 32-byte entry per row][footer JSON]
 * [footer length: u32][MAGIC]. An entry: key f64 (sort key: start time in µs, or days since
 * 1970), aux u32 (trip id hash, or score interval), payload length u32, extra length u32, unused
 * u32, payload offset f64. `extra` follows its payload directly (a trip's events).
 */
export const MAGIC = 'DDSPACK2';
export const FORMAT = 2;
export const ENTRY_BYTES = 32;
export const SECTIONS = ['trips', 'stats', 'scores'] as const;
export type Section = (typeof SECTIONS)[number];

/** The fields of one event in a trip's events array (`extra`), as api/trip_events.sql names them. */
export const EVENT_FIELDS = ['type', 'description', 'start_lat', 'start_lng', 'end_lat', 'end_lng', 'start_time', 'end_time'] as const;

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
}

export const USER_FIELDS = 4;

/** FNV-1a over UTF-16 code units: a trip id's 32-bit tag, so a detail lookup parses one row, not all. */
export function tripIdHash(tripId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tripId.length; i++) {
    h ^= tripId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
