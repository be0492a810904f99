import { join } from 'node:path';
import type { Row } from '../db/sql.js';
import { ENTRY_BYTES, EXTRAS_SUFFIX, SECTIONS, tripIdHash, utf8Less, type Section } from './format.js';
import { epochDay, statisticsPeriods, type DayStats, type Period } from './periods.js';
import { SectionFile } from './section-file.js';
import { eventRow, scoreRow, tripRow } from './stored-rows.js';
import { visibleRows } from './visible-rows.js';

// a layer file, the stored rows and the merge of a user's rows across layers have files of their
// own; re-exported so that their users keep importing the pack
export { SectionFile, type Entries, type LayerRow } from './section-file.js';
export { eventRow, scoreRow, tripRow } from './stored-rows.js';
export { UserRows, visibleRows } from './visible-rows.js';

export interface PackScope {
  appId: string;
  userId: number;
  zone: string;
}

export interface PackTripPage {
  from: Date;
  to: Date;
  afterUs: string;
  afterTrip: string;
  limit: number;
}

/** A layer's index up to this size is held in memory: 400,000 rows (a day's delta, the scores of 200,000 users). */
export const HELD_INDEX_BYTES = 16 * 2 ** 20;

export interface PackOptions {
  /** How a trip detail reads its events (SectionFile.extra()); default sync. */
  extrasReads?: 'sync' | 'async';
  /**
   * What the API reads into the page cache when it opens a snapshot (src/serving/warm.ts): the
   * indexes and rows (default), those and the trip events, or nothing.
   */
  warm?: 'rows' | 'all' | 'none';
  /** Where the pack's verification and failures are told (one line each). */
  log?: (line: string) => void;
}

/**
 * A snapshot's serving pack: each section's layers (src/serving/format.ts). Every lookup is scoped
 * to one app and user through the layers' directories, reads that user's index entries and then
 * only the payloads it answers with, by positioned reads (the page cache keeps hot parts in
 * memory; the process holds the directories and the indexes of small layers). Answers are the
 * rows the sql/models/serving/api_*.sql files return, so the routes do not know which path served them.
 */
export class ServingPack {
  /** Whether the extras files (trip events) matched their checksums: until then trip details are answered by SQL. */
  extrasTrusted = false;

  /** Each section's layers, newest first. */
  private constructor(
    private readonly layers: Record<Section, SectionFile[]>,
    private readonly options: PackOptions,
  ) {}

  /** Opens the layers a manifest names (relative to `dir`, oldest first); none stays open on failure. */
  static open(dir: string, files: Record<Section, string[]>, options: PackOptions = {}): ServingPack {
    const opened: SectionFile[] = [];
    try {
      const layers = {} as Record<Section, SectionFile[]>;
      for (const section of SECTIONS) {
        const names = files[section];
        if (!Array.isArray(names) || names.length === 0)
          throw new Error(`the manifest names no ${section} layers (a manifest of an older version)`);
        layers[section] = names
          .map((name) => {
            const file = SectionFile.acquire(join(dir, name), section);
            opened.push(file);
            return file;
          })
          .reverse();
      }
      return new ServingPack(layers, options);
    } catch (error) {
      for (const f of opened) f.release();
      throw error;
    }
  }

  /** Holds in memory the index of every layer whose index is at most `maxBytes` (see SectionFile.hold()). */
  async hold(maxBytes = HELD_INDEX_BYTES): Promise<void> {
    for (const files of Object.values(this.layers)) for (const f of files) await f.hold(maxBytes);
  }

  /** The layers' files, oldest layer first; `withExtras` adds the trip events' files (the largest part). */
  files(withExtras: boolean): string[] {
    const files = Object.values(this.layers).flatMap((layers) => [...layers].reverse());
    return files.flatMap((f) => (withExtras ? [f.name, `${f.name}${EXTRAS_SUFFIX}`] : [f.name]));
  }

  /** Local times were written in each app's zone at publish; another zone is the SQL's job. */
  servesZone(appId: string, zone: string): boolean {
    const inZone = (f: SectionFile): boolean => f.footer.zones[appId] === zone;
    return this.layers.trips.every(inZone) && this.layers.scores.every(inZone);
  }

  close(): void {
    for (const files of Object.values(this.layers)) for (const f of files) f.release();
  }

  tripPage(scope: PackScope, q: PackTripPage): Row[] {
    const rows = visibleRows(this.layers.trips, 'trips', scope.appId, scope.userId);
    const fromUs = q.from.getTime() * 1000;
    const toUs = q.to.getTime() * 1000;
    const afterUs = Number(q.afterUs);
    const picked: number[] = [];
    // rows are newest first (start desc, trip id desc), the order the list answers in
    for (let n = 0; n < rows.count && picked.length < q.limit; n++) {
      const key = rows.key(n);
      if (key >= toUs) continue;
      if (key < fromUs) break;
      if (key > afterUs) continue;
      if (key === afterUs && !utf8Less(rows.tripId(n), q.afterTrip)) continue;
      picked.push(n);
    }
    return rows.payloads(picked).map(tripRow);
  }

  async tripDetail(scope: PackScope, tripId: string): Promise<{ trip: Row; events: Row[] } | null> {
    const tag = tripIdHash(tripId);
    // the newest layer holding the trip has its current row; a layer that purged the user hides older ones
    for (const file of this.layers.trips) {
      const e = file.entries(scope.appId, scope.userId);
      for (let i = 0; i < e.count; i++) {
        if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== tag) continue;
        // the hash matched: the id decides, before the events are read
        const trip = tripRow(file.payloads(e, [i])[0]);
        if (trip['trip_id'] !== tripId) continue;
        const events = ((await file.extra(e, i, this.options.extrasReads === 'async')) as unknown[][]).map(eventRow);
        return { trip, events };
      }
      if (file.purges(scope.appId, scope.userId)) break;
    }
    return null;
  }

  statistics(scope: PackScope, period: Period, startDate: string, endDate: string): Row[] {
    const rows = visibleRows(this.layers.stats, 'stats', scope.appId, scope.userId);
    const first = epochDay(startDate);
    const last = epochDay(endDate);
    const wanted: number[] = [];
    for (let n = 0; n < rows.count; n++) {
      const day = rows.key(n);
      if (day > last) break;
      if (day >= first) wanted.push(n);
    }
    const days: DayStats[] = rows.payloads(wanted).map((values, k) => {
      const v = values as unknown as number[];
      return {
        day: rows.key(wanted[k] as number),
        countTrips: v[0] as number,
        mileageM: v[1] as number,
        durationS: v[2] as number,
        countEvents: v[3] as number,
        maxSpeedKmh: v[4] as number,
        scoreXMileage: v[5] as number,
        scoreSum: v[6] as number,
      };
    });
    return statisticsPeriods(days, period, startDate, endDate);
  }

  latestScore(scope: PackScope, interval: number, today: string): Row | null {
    const rows = visibleRows(this.layers.scores, 'scores', scope.appId, scope.userId);
    const until = epochDay(today);
    // by interval, then oldest first: the newest not after today is the last of the interval's at or before it
    for (let n = rows.count - 1; n >= 0; n--) {
      if (rows.aux(n) !== interval || rows.key(n) > until) continue;
      return scoreRow(rows.payloads([n])[0]);
    }
    return null;
  }

  /** The user's scores for one interval evaluated from `startDate` to `endDate` and not after `today`, oldest first. */
  scoreHistory(scope: PackScope, interval: number, startDate: string, endDate: string, today: string): Row[] {
    const rows = visibleRows(this.layers.scores, 'scores', scope.appId, scope.userId);
    const first = epochDay(startDate);
    const last = Math.min(epochDay(endDate), epochDay(today));
    const wanted: number[] = [];
    for (let n = 0; n < rows.count; n++) {
      const day = rows.key(n);
      if (rows.aux(n) === interval && day >= first && day <= last) wanted.push(n);
    }
    // one interval's rows are contiguous: one read per layer
    return rows.payloads(wanted).map(scoreRow);
  }
}
