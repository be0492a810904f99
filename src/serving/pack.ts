import { closeSync, fstatSync, openSync, read, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../db/sql.js';
import { ENTRY_BYTES, EVENT_FIELDS, EXTRAS_SUFFIX, FORMAT, TRIP_FIELDS, MAGIC, PURGED_FIELDS, SECTIONS, USER_FIELDS, tripIdHash, utf8Less, type Footer, type Section } from './format.js';
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

/** A trip's stored array as the row api/trip_detail.sql returns (the list reads a subset of it). */
const tripRow = (values: unknown): Row => Object.fromEntries(TRIP_FIELDS.map((f, k) => [f, (values as unknown[])[k]])) as Row;

/** A row of a layer as a merge copies it: its index fields and its bytes. */
export interface LayerRow {
  key: number;
  aux: number;
  payloadBytes(): Buffer;
  extraBytes(): Buffer;
}

/** One section file (a layer) opened for reading: the directory in memory, everything else read on demand. */
export class SectionFile {
  private readonly users = new Map<string, number>();
  private readonly purged = new Set<string>();

  private constructor(
    private readonly fd: number,
    private readonly extrasFd: number,
    readonly footer: Footer,
    readonly name: string,
  ) {
    const a = footer.apps;
    for (let u = 0; u < footer.users.length; u += USER_FIELDS) this.users.set(`${a[footer.users[u] as number]}\u0000${footer.users[u + 1]}`, u);
    for (let u = 0; u < footer.purged.length; u += PURGED_FIELDS) this.purged.add(`${a[footer.purged[u] as number]}\u0000${footer.purged[u + 1]}`);
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
      if (footer.format !== FORMAT || footer.section !== section) throw new Error(`serving pack ${file} holds ${footer.section} in format ${footer.format}; expected ${section} in ${FORMAT}`);
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

  /** What a merge weighs this layer by: its rows, and its purged users. */
  get weight(): number {
    return this.footer.count + this.footer.purged.length / PURGED_FIELDS;
  }

  /** Whether the user was purged before this layer: their rows in older layers are gone. */
  purges(appId: string, userId: number): boolean {
    return this.purged.size > 0 && this.purged.has(`${appId}\u0000${userId}`);
  }

  /** Ids of the users of one app this layer has rows of, or (`purged`) marks as purged. */
  usersOf(appId: string, purged = false): number[] {
    const a = this.footer.apps.indexOf(appId);
    const list = purged ? this.footer.purged : this.footer.users;
    const step = purged ? PURGED_FIELDS : USER_FIELDS;
    const out: number[] = [];
    if (a >= 0) for (let u = 0; u < list.length; u += step) if (list[u] === a) out.push(list[u + 1] as number);
    return out;
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
    if (count > 0) this.readFully(buf, position);
    return { buf, count };
  }

  /** Where the user's index entries are, and a buffer for them. */
  private span(appId: string, userId: number): Entries & { position: number } {
    const u = this.users.get(`${appId}\u0000${userId}`);
    if (u === undefined) return { buf: Buffer.alloc(0), count: 0, position: 0 };
    const count = this.footer.users[u + 3] as number;
    return { buf: Buffer.allocUnsafe(count * ENTRY_BYTES), count, position: this.footer.indexOffset + (this.footer.users[u + 2] as number) * ENTRY_BYTES };
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
   * Entry i's payload and extra, parsed, read off the event loop (libuv's thread pool): a trip
   * detail is a random read into the large extras, which misses the page cache on a big pack, and a
   * synchronous read would stall every request behind it while the disk answers.
   */
  async row(e: Entries, i: number): Promise<{ payload: unknown; extra: unknown }> {
    const payload = Buffer.allocUnsafe(e.buf.readUInt32LE(i * ENTRY_BYTES + 12));
    const extra = Buffer.allocUnsafe(e.buf.readUInt32LE(i * ENTRY_BYTES + 16));
    await Promise.all([
      readFullyAsync(this.fd, payload, e.buf.readDoubleLE(i * ENTRY_BYTES + 24)),
      readFullyAsync(this.extrasFd, extra, e.buf.readDoubleLE(i * ENTRY_BYTES + 32)),
    ]);
    return { payload: JSON.parse(payload.toString('utf8')) as unknown, extra: JSON.parse(extra.toString('utf8')) as unknown };
  }

  /** The user's index entries, read off the event loop (see row()). */
  async entriesAsync(appId: string, userId: number): Promise<Entries> {
    const { buf, count, position } = this.span(appId, userId);
    if (count > 0) await readFullyAsync(this.fd, buf, position);
    return { buf, count };
  }

  private readFully(buf: Buffer, position: number, fd = this.fd): void {
    for (let done = 0; done < buf.length; ) {
      const n = readSync(fd, buf, done, buf.length - done, position + done);
      if (n === 0) throw new Error('serving pack ended early');
      done += n;
    }
  }
}

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
    return (this.entries[this.layer[n] as number] as Entries).buf.readDoubleLE((this.index[n] as number) * ENTRY_BYTES);
  }

  aux(n: number): number {
    return (this.entries[this.layer[n] as number] as Entries).buf.readUInt32LE((this.index[n] as number) * ENTRY_BYTES + 8);
  }

  /** A trip row's id (the payload's first field), parsed once. */
  tripId(n: number): string {
    const at = (this.layer[n] as number) * 2 ** 32 + (this.index[n] as number);
    let id = this.ids.get(at);
    if (id === undefined) this.ids.set(at, (id = String((this.payloads([n])[0] as unknown[])[0])));
    return id;
  }

  /** The payloads of rows `ns` (ascending), parsed, in that order: one read per layer. */
  payloads(ns: number[]): unknown[] {
    const out: unknown[] = new Array(ns.length);
    const byLayer = new Map<number, number[]>();
    ns.forEach((n, k) => {
      const l = this.layer[n] as number;
      let list = byLayer.get(l);
      if (!list) byLayer.set(l, (list = []));
      list.push(k);
    });
    for (const [l, ks] of byLayer) {
      const parsed = (this.files[l] as SectionFile).payloads(this.entries[l] as Entries, ks.map((k) => this.index[ns[k] as number] as number));
      ks.forEach((k, j) => (out[k] = parsed[j]));
    }
    return out;
  }
}

/**
 * A user's rows of a section whose layers are `files`, newest first: each layer's rows, less
 * those a newer layer replaced (the same trip id; the same day) and all rows below a layer that
 * purged the user, in the section's order (trips: start desc, then trip id desc in UTF-8 bytes as
 * DuckDB orders; days ascending).
 */
export function visibleRows(files: SectionFile[], section: Section, appId: string, userId: number): UserRows {
  const entries: Entries[] = [];
  for (const file of files) {
    entries.push(file.entries(appId, userId));
    if (file.purges(appId, userId)) break;
  }
  const rows = new UserRows(files.slice(0, entries.length), entries);
  const used = entries.flatMap((e, l) => (e.count > 0 ? [l] : []));
  if (used.length <= 1) {
    // one layer (the usual case): its rows as stored
    const l = used[0];
    if (l !== undefined) for (let i = 0; i < (entries[l] as Entries).count; i++) rows.layer.push(l), rows.index.push(i);
    return rows;
  }
  // newer layers first; a row is kept unless a newer layer holds the same trip (or day)
  const idOf = (n: number): number => (section === 'trips' ? rows.aux(n) : rows.key(n));
  const newer = new Map<number, number[]>();
  for (const l of used) {
    const e = entries[l] as Entries;
    const added: number[] = [];
    for (let i = 0; i < e.count; i++) {
      rows.layer.push(l);
      rows.index.push(i);
      const n = rows.count - 1;
      const same = newer.get(idOf(n));
      // trips: the id's hash matched; only then are the ids parsed and compared
      if (same && (section !== 'trips' || same.some((m) => rows.tripId(m) === rows.tripId(n)))) {
        rows.layer.pop();
        rows.index.pop();
        continue;
      }
      added.push(n);
    }
    for (const n of added) {
      const list = newer.get(idOf(n));
      if (list) list.push(n);
      else newer.set(idOf(n), [n]);
    }
  }
  const order = Array.from({ length: rows.count }, (_, n) => n);
  order.sort(section === 'trips'
    ? (x, y) => rows.key(y) - rows.key(x) || (utf8Less(rows.tripId(x), rows.tripId(y)) ? 1 : utf8Less(rows.tripId(y), rows.tripId(x)) ? -1 : 0)
    : (x, y) => rows.key(x) - rows.key(y));
  const sorted = new UserRows(rows.files, rows.entries);
  for (const n of order) sorted.layer.push(rows.layer[n] as number), sorted.index.push(rows.index[n] as number);
  return sorted;
}

/**
 * A snapshot's serving pack: each section's layers (src/serving/format.ts). Every lookup is scoped
 * to one app and user through the layers' directories, reads that user's index entries and then
 * only the payloads it answers with, by positioned reads (the page cache keeps hot parts in
 * memory; the process holds only the directories). Answers are the rows the sql/api files
 * return, so the routes do not know which path served them.
 */
export class ServingPack {
  /** Each section's layers, newest first. */
  private constructor(private readonly layers: Record<Section, SectionFile[]>) {}

  /** Opens the layers a manifest names (relative to `dir`, oldest first); none stays open on failure. */
  static open(dir: string, files: Record<Section, string[]>): ServingPack {
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
      return new ServingPack(layers);
    } catch (error) {
      for (const f of opened) f.close();
      throw error;
    }
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
      const e = await file.entriesAsync(scope.appId, scope.userId);
      for (let i = 0; i < e.count; i++) {
        if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== tag) continue;
        // payload and events in one round: a hash that matches another trip's id costs one wasted read
        const row = await file.row(e, i);
        const trip = tripRow(row.payload);
        if (trip['trip_id'] !== tripId) continue;
        const events = (row.extra as unknown[][]).map((values) => Object.fromEntries(EVENT_FIELDS.map((f, k) => [f, values[k]])) as Row);
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
    // scores are not layered: one file
    const file = this.layers.scores[0] as SectionFile;
    const e = file.entries(scope.appId, scope.userId);
    const until = epochDay(today);
    // newest evaluation first
    for (let i = 0; i < e.count; i++) {
      if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== interval) continue;
      if (e.buf.readDoubleLE(i * ENTRY_BYTES) > until) continue;
      return (file.payloads(e, [i])[0] as Row | undefined) ?? null;
    }
    return null;
  }
}
