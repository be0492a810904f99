import { closeSync, fstatSync, openSync, read, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../db/sql.js';
import { Directory } from './directory.js';
import { ENTRY_BYTES, EXTRAS_SUFFIX, MAGIC, PURGED_FIELDS, SCORE_FIELDS, SECTION_FORMAT, SECTIONS, USER_FIELDS, tripIdHash, utf8Less, type Footer, type Section } from './format.js';
import { epochDay, statisticsPeriods, type DayStats, type Period } from './periods.js';

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

export interface Entries {
  buf: Buffer;
  count: number;
}

/**
 * A trip's stored array as the row api/trip_detail.sql returns (the list reads a subset of it).
 * Written out field by field (the order of TRIP_FIELDS, which a test checks): a list builds 20 of
 * these per request, and Object.fromEntries over the field names cost 3.6 µs a row.
 */
export const tripRow = (values: unknown): Row => {
  const v = values as unknown[];
  return {
    trip_id: v[0],
    device_id: v[1],
    status: v[2],
    abnormal_reason: v[3],
    os: v[4],
    count_events: v[5],
    score: v[6],
    energy_g: v[7],
    avg_speed_kmh: v[8],
    max_speed_kmh: v[9],
    mileage_m: v[10],
    duration_s: v[11],
    coordinate: v[12],
    is_auto_start: v[13],
    is_auto_end: v[14],
    start_time: v[15],
    end_time: v[16],
    started_us: v[17],
    start_lat: v[18],
    start_lng: v[19],
    end_lat: v[20],
    end_lng: v[21],
    start_poi: v[22],
    end_poi: v[23],
  };
};

/** A score's stored array as the row api/safety_score.sql returns (the order of SCORE_FIELDS). */
export const scoreRow = (values: unknown): Row => {
  const v = values as unknown[];
  const row: Row = {};
  for (let i = 0; i < SCORE_FIELDS.length; i++) row[SCORE_FIELDS[i] as string] = v[i];
  return row;
};

/** An event's stored array as the row api/trip_events.sql returns (the order of EVENT_FIELDS, which a test checks). */
export const eventRow = (v: unknown[]): Row => ({ type: v[0], description: v[1], start_lat: v[2], start_lng: v[3], end_lat: v[4], end_lng: v[5], start_time: v[6], end_time: v[7] });

/** A row of a layer as a merge copies it: its index fields and its bytes. */
export interface LayerRow {
  key: number;
  aux: number;
  payloadBytes(): Buffer;
  extraBytes(): Buffer;
}

/** One section file (a layer) opened for reading: the directory in memory, everything else read on demand. */
export class SectionFile {
  private readonly appIndex = new Map<string, number>();
  private readonly users: Directory;
  private readonly purged: Directory;
  /** The whole index, when hold() read it into memory (small layers). */
  private index: Buffer | null = null;
  /** The footer less its user lists, which the directories hold. */
  readonly footer: Omit<Footer, 'users' | 'purged'>;

  private constructor(
    private readonly fd: number,
    private readonly extrasFd: number,
    footer: Footer,
    readonly name: string,
  ) {
    const { users, purged, ...rest } = footer;
    this.footer = rest;
    footer.apps.forEach((a, i) => this.appIndex.set(a, i));
    this.users = new Directory(footer.apps.length, users, USER_FIELDS);
    this.purged = new Directory(footer.apps.length, purged, PURGED_FIELDS);
  }

  static open(file: string, section: Section): SectionFile {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const tail = Buffer.alloc(4 + MAGIC.length);
      if (size < tail.length) throw new Error(`serving pack ${file} is truncated`);
      readSync(fd, tail, 0, tail.length, size - tail.length);
      if (tail.toString('latin1', 4) !== MAGIC) throw new Error(`serving pack ${file} is not a pack of this format, or is truncated`);
      const footerLength = tail.readUInt32LE(0);
      const footerBytes = Buffer.alloc(footerLength);
      readSync(fd, footerBytes, 0, footerLength, size - tail.length - footerLength);
      const footer = JSON.parse(footerBytes.toString('utf8')) as Footer;
      if (footer.format !== SECTION_FORMAT[section] || footer.section !== section) throw new Error(`serving pack ${file} holds ${footer.section} in format ${footer.format}; expected ${section} in ${SECTION_FORMAT[section]}`);
      return new SectionFile(fd, openSync(`${file}${EXTRAS_SUFFIX}`, 'r'), footer, file);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  close(): void {
    closeSync(this.fd);
    closeSync(this.extrasFd);
  }

  /**
   * Reads the index into memory (outside the V8 heap) if it is at most `maxBytes`: a delta layer
   * or the scores, whose lookups then need no read at all. Bases are far larger and stay on disk.
   */
  async hold(maxBytes: number): Promise<void> {
    const bytes = this.footer.count * ENTRY_BYTES;
    if (this.index || bytes > maxBytes) return;
    const index = Buffer.allocUnsafe(bytes);
    await readFullyAsync(this.fd, index, this.footer.indexOffset);
    this.index = index;
  }

  /** What a merge weighs this layer by: its rows, and its purged users. */
  get weight(): number {
    return this.footer.count + this.purged.size;
  }

  /** Whether the user was purged before this layer: their rows in older layers are gone. */
  purges(appId: string, userId: number): boolean {
    return this.purged.size > 0 && this.purged.find(this.appIndex.get(appId) ?? -1, userId) >= 0;
  }

  /** Ids of the users of one app this layer has rows of, or (`purged`) marks as purged. */
  usersOf(appId: string, purged = false): number[] {
    return (purged ? this.purged : this.users).usersOf(this.appIndex.get(appId) ?? -1);
  }

  /** Every row of one user, in stored order, with its bytes (two reads: payloads, extras). */
  userRows(appId: string, userId: number): LayerRow[] {
    const e = this.entries(appId, userId);
    if (e.count === 0) return [];
    const at = (i: number, field: number): number => e.buf.readDoubleLE(i * ENTRY_BYTES + field);
    const len = (i: number, field: number): number => e.buf.readUInt32LE(i * ENTRY_BYTES + field);
    const last = e.count - 1;
    const payloadBase = at(0, 24);
    const payloads = Buffer.allocUnsafe(at(last, 24) + len(last, 12) - payloadBase);
    this.readFully(payloads, payloadBase);
    const extraBase = at(0, 32);
    const extras = Buffer.allocUnsafe(at(last, 32) + len(last, 16) - extraBase);
    this.readFully(extras, extraBase, this.extrasFd);
    return Array.from({ length: e.count }, (_, i) => ({
      key: at(i, 0),
      aux: e.buf.readUInt32LE(i * ENTRY_BYTES + 8),
      payloadBytes: () => payloads.subarray(at(i, 24) - payloadBase, at(i, 24) - payloadBase + len(i, 12)),
      extraBytes: () => extras.subarray(at(i, 32) - extraBase, at(i, 32) - extraBase + len(i, 16)),
    }));
  }

  /** The user's index entries (none for a user this file does not know). */
  entries(appId: string, userId: number): Entries {
    const { buf, count, position } = this.span(appId, userId);
    if (count > 0 && position >= 0) this.readFully(buf, position);
    return { buf, count };
  }

  /** Where the user's index entries are, and a buffer for them (position -1: the buffer holds them already). */
  private span(appId: string, userId: number): Entries & { position: number } {
    const u = this.users.find(this.appIndex.get(appId) ?? -1, userId);
    if (u < 0) return { buf: EMPTY, count: 0, position: 0 };
    const count = this.users.field(u, 1);
    const first = this.users.field(u, 0);
    if (this.index) return { buf: this.index.subarray(first * ENTRY_BYTES, (first + count) * ENTRY_BYTES), count, position: -1 };
    return { buf: Buffer.allocUnsafe(count * ENTRY_BYTES), count, position: this.footer.indexOffset + first * ENTRY_BYTES };
  }

  /** The payloads of entries `at` (ascending), parsed, in that order: one read, as payloads are stored in entry order. */
  payloads(e: Entries, at: number[]): unknown[] {
    if (at.length === 0) return [];
    const first = at[0] as number;
    const last = at[at.length - 1] as number;
    const base = e.buf.readDoubleLE(first * ENTRY_BYTES + 24);
    const bytes = Buffer.allocUnsafe(e.buf.readDoubleLE(last * ENTRY_BYTES + 24) + e.buf.readUInt32LE(last * ENTRY_BYTES + 12) - base);
    this.readFully(bytes, base);
    return at.map((i) => {
      const start = e.buf.readDoubleLE(i * ENTRY_BYTES + 24) - base;
      return JSON.parse(bytes.toString('utf8', start, start + e.buf.readUInt32LE(i * ENTRY_BYTES + 12))) as unknown;
    });
  }

  /**
   * Entry i's extra (a trip's events), parsed. Read synchronously by default, as index and
   * payloads are: while the files are in the page cache a read through libuv's thread pool costs
   * more than the read, because on two busy cores the pool's thread waits for a CPU (trip detail
   * p99 at 1,000 req/s: 9.1-9.7 ms synchronous, 17.5-23.0 ms through the pool; docs/benchmarks.md).
   * `async` is for extras much larger than the page cache on a slow disk: a miss
   * (0.3 ms median, 0.9 ms p99 on this machine's disk) then does not hold the event loop.
   */
  async extra(e: Entries, i: number, async = false): Promise<unknown> {
    const extra = Buffer.allocUnsafe(e.buf.readUInt32LE(i * ENTRY_BYTES + 16));
    const position = e.buf.readDoubleLE(i * ENTRY_BYTES + 32);
    if (async) await readFullyAsync(this.extrasFd, extra, position);
    else this.readFully(extra, position, this.extrasFd);
    return JSON.parse(extra.toString('utf8')) as unknown;
  }

  private readFully(buf: Buffer, position: number, fd = this.fd): void {
    for (let done = 0; done < buf.length; ) {
      const n = readSync(fd, buf, done, buf.length - done, position + done);
      if (n === 0) throw new Error('serving pack ended early');
      done += n;
    }
  }
}

const EMPTY = Buffer.alloc(0);

/** Fills `buf` from `fd` at `position` through the thread pool. */
async function readFullyAsync(fd: number, buf: Buffer, position: number): Promise<void> {
  for (let done = 0; done < buf.length; ) {
    const n = await new Promise<number>((resolve, reject) => read(fd, buf, done, buf.length - done, position + done, (error, bytes) => (error ? reject(error) : resolve(bytes))));
    if (n === 0) throw new Error('serving pack ended early');
    done += n;
  }
}

/**
 * One user's rows of a section across its layers, as they are now: row n is entry `index[n]` of
 * layer `layer[n]`, in the section's order (trips newest first, days oldest first).
 */
export class UserRows {
  readonly layer: number[] = [];
  readonly index: number[] = [];
  private readonly ids = new Map<number, string>();

  constructor(
    readonly files: SectionFile[],
    readonly entries: Entries[],
  ) {}

  get count(): number {
    return this.index.length;
  }

  key(n: number): number {
    return entryKey(this.entries[this.layer[n] as number] as Entries, this.index[n] as number);
  }

  aux(n: number): number {
    return entryAux(this.entries[this.layer[n] as number] as Entries, this.index[n] as number);
  }

  /** A trip row's id (the payload's first field), parsed once. */
  tripId(n: number): string {
    return this.idAt(this.layer[n] as number, this.index[n] as number);
  }

  /** The id of entry i of layer l (tripId() by layer and entry). */
  idAt(l: number, i: number): string {
    let id = this.ids.get(l * 2 ** 32 + i);
    if (id === undefined) {
      id = idOf((this.files[l] as SectionFile).payloads(this.entries[l] as Entries, [i])[0]);
      this.ids.set(l * 2 ** 32 + i, id);
    }
    return id;
  }

  /** The payloads of rows `ns` (ascending), parsed, in that order: one read per layer. */
  payloads(ns: number[]): unknown[] {
    const out: unknown[] = new Array(ns.length);
    const byLayer = new Map<number, number[]>();
    ns.forEach((n, k) => {
      const l = this.layer[n] as number;
      const list = byLayer.get(l);
      if (list) list.push(k);
      else byLayer.set(l, [k]);
    });
    for (const [l, ks] of byLayer) {
      const parsed = (this.files[l] as SectionFile).payloads(this.entries[l] as Entries, ks.map((k) => this.index[ns[k] as number] as number));
      ks.forEach((k, j) => (out[k] = parsed[j]));
    }
    return out;
  }
}

const entryKey = (e: Entries, i: number): number => e.buf.readDoubleLE(i * ENTRY_BYTES);
const entryAux = (e: Entries, i: number): number => e.buf.readUInt32LE(i * ENTRY_BYTES + 8);
const idOf = (payload: unknown): string => String((payload as unknown[])[0]);

/** How many layers (newest first) a user's rows come from: down to the first that purged the user, which still has its own rows. */
function depthOf(files: SectionFile[], appId: string, userId: number): number {
  let depth = 0;
  while (depth < files.length) if (files[depth++]?.purges(appId, userId)) break;
  return depth;
}

/**
 * A user's rows of a section whose layers are `files`, newest first: each layer's rows, less
 * those a newer layer replaced (the same trip id; the same day) and all rows below a layer that
 * purged the user, in the section's order (trips: start desc, then trip id desc in UTF-8 bytes as
 * DuckDB orders; days ascending).
 */
export function visibleRows(files: SectionFile[], section: Section, appId: string, userId: number): UserRows {
  const layers = files.slice(0, depthOf(files, appId, userId));
  return mergeVisible(new UserRows(layers, layers.map((f) => f.entries(appId, userId))), section);
}

/**
 * Merges the layers' entries (each already in the section's order) into `rows`' visible rows: a
 * row is dropped when a newer layer holds the same trip (or day); the rest are merged in order,
 * one pass over the layers' heads (at most a dozen layers).
 */
function mergeVisible(rows: UserRows, section: Section): UserRows {
  const { entries } = rows;
  const used = entries.flatMap((e, l) => (e.count > 0 ? [l] : []));
  if (used.length <= 1) {
    // one layer (the usual case): its rows as stored
    const l = used[0];
    if (l !== undefined) for (let i = 0; i < (entries[l] as Entries).count; i++) {
      rows.layer.push(l);
      rows.index.push(i);
    }
    return rows;
  }
  const trips = section === 'trips';
  // a row's identity across layers: a trip's id hash (then its id), a day, a score's day and interval (30 or 90)
  const idOfEntry = (l: number, i: number): number =>
    (trips ? entryAux(entries[l] as Entries, i) : entryKey(entries[l] as Entries, i) * 128 + entryAux(entries[l] as Entries, i));
  // the rows each layer keeps: not replaced by a newer layer (only newer layers are indexed, and they are small)
  const newer = new Map<number, [number, number][]>();
  const kept = used.map((l, u) => {
    const e = entries[l] as Entries;
    const keep: number[] = [];
    for (let i = 0; i < e.count; i++) {
      const same = newer.get(idOfEntry(l, i));
      // trips: the id's hash matched; only then are the ids compared
      if (same && (!trips || same.some(([m, j]) => rows.idAt(m, j) === rows.idAt(l, i)))) continue;
      keep.push(i);
    }
    if (u < used.length - 1) {
      for (const i of keep) {
        const list = newer.get(idOfEntry(l, i));
        if (list) list.push([l, i]);
        else newer.set(idOfEntry(l, i), [[l, i]]);
      }
    }
    return keep;
  });
  // whether row (l, i) comes before row (m, j) in the section's order
  const before = (l: number, i: number, m: number, j: number): boolean => {
    const a = entryKey(entries[l] as Entries, i);
    const b = entryKey(entries[m] as Entries, j);
    if (!trips) {
      // scores: by interval, then by day; statistics (aux 0): by day
      const x = entryAux(entries[l] as Entries, i);
      const y = entryAux(entries[m] as Entries, j);
      return x < y || (x === y && a < b);
    }
    if (a !== b) return a > b;
    return utf8Less(rows.idAt(m, j), rows.idAt(l, i));
  };
  const head = kept.map(() => 0);
  for (;;) {
    let best = -1;
    for (let u = 0; u < used.length; u++) {
      if ((head[u] as number) >= (kept[u] as number[]).length) continue;
      if (best < 0 || before(used[u] as number, (kept[u] as number[])[head[u] as number] as number, used[best] as number, (kept[best] as number[])[head[best] as number] as number)) best = u;
    }
    if (best < 0) return rows;
    rows.layer.push(used[best] as number);
    rows.index.push((kept[best] as number[])[head[best] as number] as number);
    head[best] = (head[best] as number) + 1;
  }
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
 * rows the sql/api files return, so the routes do not know which path served them.
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
        if (!Array.isArray(names) || names.length === 0) throw new Error(`the manifest names no ${section} layers (a manifest of an older version)`);
        layers[section] = names.map((name) => {
          const file = SectionFile.open(join(dir, name), section);
          opened.push(file);
          return file;
        }).reverse();
      }
      return new ServingPack(layers, options);
    } catch (error) {
      for (const f of opened) f.close();
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
    for (const files of Object.values(this.layers)) for (const f of files) f.close();
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
        countTrips: v[0] as number, mileageM: v[1] as number, durationS: v[2] as number, countEvents: v[3] as number,
        maxSpeedKmh: v[4] as number, scoreXMileage: v[5] as number, scoreSum: v[6] as number,
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
