/** What loading one file did; summed over files into the load report. */
export interface FileReport {
  file: string;
  skipped: boolean;
  /** Why the file could not be loaded at all (unreadable, not NDJSON/Parquet, too long a line). */
  failed?: string;
  /** Why it failed, as a metric's label: the check its change failed (`checks/events_have_trips`), `changed_during_load`, or `unreadable`. */
  failedBy?: string;
  /** The file changed while it was loaded (`changed_during_load`): nothing kept, left for the next run. */
  retry?: boolean;
  /** How an NDJSON file was read: `typed` (DuckDB's reader, whole) or `lines` (line by line, when a line is malformed or mistyped). */
  read?: 'typed' | 'lines' | 'parquet';
  version: number | null;
  /** Why the file's route files were left to the publish (written from the Parquet there), if they were. */
  routesDeferred?: string;
  records: Record<string, number>;
  points: Record<string, number>;
  events: Record<string, number>;
  status: Record<string, number>;
  replaced: number;
}

export interface LoadTotals {
  files: number;
  filesSkipped: number;
  filesFailed: number;
  /** Files failed, by `failedBy`. */
  filesFailedBy: Record<string, number>;
  recordsRead: number;
  tripsLoaded: number;
  tripsReplaced: number;
  tripsAbnormal: Record<string, number>;
  rejected: Record<string, number>;
  pointsRead: number;
  pointsKept: number;
  pointsDropped: Record<string, number>;
  eventsLoaded: number;
  eventsQuarantined: Record<string, number>;
}

/** `unchanged`: an SDK re-send equal to the stored trip, accepted without effect (docs/decisions.md, Trip records (load), SDK re-sends). */
const NOT_REJECTED = new Set(['loaded', 'superseded_in_file', 'unchanged']);

export function emptyFileReport(file: string, skipped: boolean): FileReport {
  return { file, skipped, version: null, records: {}, points: {}, events: {}, status: {}, replaced: 0 };
}

export function totals(files: FileReport[]): LoadTotals {
  const t: LoadTotals = {
    files: files.length,
    filesSkipped: 0,
    filesFailed: 0,
    filesFailedBy: {},
    recordsRead: 0,
    tripsLoaded: 0,
    tripsReplaced: 0,
    tripsAbnormal: {},
    rejected: {},
    pointsRead: 0,
    pointsKept: 0,
    pointsDropped: {},
    eventsLoaded: 0,
    eventsQuarantined: {},
  };
  for (const f of files) {
    if (f.skipped) t.filesSkipped++;
    if (f.failed) {
      t.filesFailed++;
      add(t.filesFailedBy, f.failedBy ?? 'unreadable', 1);
    }
    for (const [reason, n] of Object.entries(f.records)) {
      t.recordsRead += n;
      if (!NOT_REJECTED.has(reason)) add(t.rejected, reason, n);
    }
    // a tripId repeated inside one file: the earlier line is replaced by the later one
    t.tripsReplaced += f.replaced + (f.records['superseded_in_file'] ?? 0);
    for (const [status, n] of Object.entries(f.status)) {
      t.tripsLoaded += n;
      if (status !== 'normal') add(t.tripsAbnormal, status, n);
    }
    for (const [reason, n] of Object.entries(f.points)) {
      t.pointsRead += n;
      if (reason === 'kept') t.pointsKept += n;
      else add(t.pointsDropped, reason, n);
    }
    for (const [reason, n] of Object.entries(f.events)) {
      if (reason === 'loaded') t.eventsLoaded += n;
      else add(t.eventsQuarantined, reason, n);
    }
  }
  return t;
}

function add(target: Record<string, number>, key: string, n: number): void {
  target[key] = (target[key] ?? 0) + n;
}

export interface ReasonCount {
  /** A record rejected whole, an event quarantined (its trip kept), a point dropped. */
  kind: 'record' | 'event' | 'point';
  reason: string;
  count: number;
}

/** What a load set aside, by reason, most frequent first within each kind (the end of its summary). */
export function reasonCounts(t: LoadTotals): ReasonCount[] {
  const of = (kind: ReasonCount['kind'], counts: Record<string, number>): ReasonCount[] =>
    Object.entries(counts)
      .map(([reason, count]) => ({ kind, reason, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return [...of('record', t.rejected), ...of('event', t.eventsQuarantined), ...of('point', t.pointsDropped)];
}

/** What the landing area's intake did besides loading: each counted, none silent. */
export interface LandingIntake {
  /** Partner files written since a load took them, moved back into the landing area to load whole. */
  retaken: number;
  /** Partner files left for a later run: written within the quiet period. */
  settling: number;
  /** Files gone between the listing and their turn (renamed or removed by their writer). */
  vanished: number;
  /** Files whose name was not valid UTF-8, renamed before they were taken. */
  renamed: number;
}
