import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../db/sql.js';
import { ENTRY_BYTES, EVENT_FIELDS, EXTRAS_SUFFIX, FORMAT, TRIP_FIELDS, MAGIC, SECTIONS, USER_FIELDS, tripIdHash, utf8Less, type Footer, type Section } from './format.js';
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

interface Entries {
  buf: Buffer;
  count: number;
}

/** A trip's stored array as the row api/trip_detail.sql returns (the list reads a subset of it). */
const tripRow = (values: unknown): Row => Object.fromEntries(TRIP_FIELDS.map((f, k) => [f, (values as unknown[])[k]])) as Row;

/** A row of a previous trips file, as the incremental build copies it. */
export interface OldRow {
  key: number;
  aux: number;
  tripId(): string;
  payloadBytes(): Buffer;
  extraBytes(): Buffer;
}

/** One section file opened for reading: the directory in memory, everything else read on demand. */
export class SectionFile {
  private readonly users = new Map<string, number>();

  private constructor(
    private readonly fd: number,
    private readonly extrasFd: number,
    readonly footer: Footer,
    readonly name: string,
  ) {
    const a = footer.apps;
    for (let u = 0; u < footer.users.length; u += USER_FIELDS) this.users.set(`${a[footer.users[u] as number]}\u0000${footer.users[u + 1]}`, u);
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

  /** Ids of the users of one app this file holds. */
  usersOf(appId: string): number[] {
    const a = this.footer.apps.indexOf(appId);
    const out: number[] = [];
    for (let u = 0; u < this.footer.users.length; u += USER_FIELDS) if (this.footer.users[u] === a) out.push(this.footer.users[u + 1] as number);
    return out;
  }

  /** Every row of one user, in stored order, with its bytes (two reads: payloads, extras). */
  userRows(appId: string, userId: number): OldRow[] {
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
    return Array.from({ length: e.count }, (_, i) => {
      const payload = payloads.subarray(at(i, 24) - payloadBase, at(i, 24) - payloadBase + len(i, 12));
      let tripId: string | undefined;
      return {
        key: at(i, 0),
        aux: e.buf.readUInt32LE(i * ENTRY_BYTES + 8),
        tripId: () => (tripId ??= String((JSON.parse(payload.toString('utf8')) as unknown[])[0])),
        payloadBytes: () => payload,
        extraBytes: () => extras.subarray(at(i, 32) - extraBase, at(i, 32) - extraBase + len(i, 16)),
      };
    });
  }

  /** The user's index entries (none for a user this file does not know). */
  entries(appId: string, userId: number): Entries {
    const u = this.users.get(`${appId}\u0000${userId}`);
    if (u === undefined) return { buf: Buffer.alloc(0), count: 0 };
    const first = this.footer.users[u + 2] as number;
    const count = this.footer.users[u + 3] as number;
    const buf = Buffer.allocUnsafe(count * ENTRY_BYTES);
    if (count > 0) this.readFully(buf, this.footer.indexOffset + first * ENTRY_BYTES);
    return { buf, count };
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

  /** Entry i's extra, parsed. */
  extra(e: Entries, i: number): unknown {
    const bytes = Buffer.allocUnsafe(e.buf.readUInt32LE(i * ENTRY_BYTES + 16));
    this.readFully(bytes, e.buf.readDoubleLE(i * ENTRY_BYTES + 32), this.extrasFd);
    return JSON.parse(bytes.toString('utf8')) as unknown;
  }

  private readFully(buf: Buffer, position: number, fd = this.fd): void {
    for (let done = 0; done < buf.length; ) {
      const n = readSync(fd, buf, done, buf.length - done, position + done);
      if (n === 0) throw new Error('serving pack ended early');
      done += n;
    }
  }
}

/**
 * A snapshot's serving pack: its three section files. Every lookup is scoped to one app and user
 * through a directory, reads that user's index entries and then only the payloads it answers with,
 * by positioned reads (the page cache keeps hot parts in memory; the process holds only the
 * directories). Answers are the rows the sql/api files return, so the routes do not know which
 * path served them.
 */
export class ServingPack {
  private constructor(private readonly files: Record<Section, SectionFile>) {}

  /** Opens the files a manifest names (relative to `dir`); none stays open on failure. */
  static open(dir: string, files: Record<Section, string>): ServingPack {
    const opened: Partial<Record<Section, SectionFile>> = {};
    try {
      for (const section of SECTIONS) opened[section] = SectionFile.open(join(dir, files[section]), section);
      return new ServingPack(opened as Record<Section, SectionFile>);
    } catch (error) {
      for (const f of Object.values(opened)) f.close();
      throw error;
    }
  }

  /** Local times were written in each app's zone at publish; another zone is the SQL's job. */
  servesZone(appId: string, zone: string): boolean {
    return this.files.trips.footer.zones[appId] === zone && this.files.scores.footer.zones[appId] === zone;
  }

  close(): void {
    for (const f of Object.values(this.files)) f.close();
  }

  tripPage(scope: PackScope, q: PackTripPage): Row[] {
    const file = this.files.trips;
    const e = file.entries(scope.appId, scope.userId);
    const fromUs = q.from.getTime() * 1000;
    const toUs = q.to.getTime() * 1000;
    const afterUs = Number(q.afterUs);
    const picked: number[] = [];
    // entries are newest first (start desc, trip id desc), the order the list answers in
    for (let i = 0; i < e.count && picked.length < q.limit; i++) {
      const key = e.buf.readDoubleLE(i * ENTRY_BYTES);
      if (key >= toUs) continue;
      if (key < fromUs) break;
      if (key > afterUs) continue;
      if (key === afterUs) {
        const row = tripRow(file.payloads(e, [i])[0]);
        if (!utf8Less(String(row['trip_id']), q.afterTrip)) continue;
      }
      picked.push(i);
    }
    return file.payloads(e, picked).map(tripRow);
  }

  tripDetail(scope: PackScope, tripId: string): { trip: Row; events: Row[] } | null {
    const file = this.files.trips;
    const e = file.entries(scope.appId, scope.userId);
    const tag = tripIdHash(tripId);
    for (let i = 0; i < e.count; i++) {
      if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== tag) continue;
      const trip = tripRow(file.payloads(e, [i])[0]);
      if (trip['trip_id'] !== tripId) continue;
      const events = (file.extra(e, i) as unknown[][]).map((values) => Object.fromEntries(EVENT_FIELDS.map((f, k) => [f, values[k]])) as Row);
      return { trip, events };
    }
    return null;
  }

  statistics(scope: PackScope, period: Period, startDate: string, endDate: string): Row[] {
    const file = this.files.stats;
    const e = file.entries(scope.appId, scope.userId);
    const first = epochDay(startDate);
    const last = epochDay(endDate);
    const wanted: number[] = [];
    for (let i = 0; i < e.count; i++) {
      const day = e.buf.readDoubleLE(i * ENTRY_BYTES);
      if (day > last) break;
      if (day >= first) wanted.push(i);
    }
    const days: DayStats[] = file.payloads(e, wanted).map((values, n) => {
      const v = values as unknown as number[];
      return {
        day: e.buf.readDoubleLE((wanted[n] as number) * ENTRY_BYTES),
        countTrips: v[0] as number, mileageM: v[1] as number, durationS: v[2] as number, countEvents: v[3] as number,
        maxSpeedKmh: v[4] as number, scoreXMileage: v[5] as number, scoreSum: v[6] as number,
      };
    });
    return statisticsPeriods(days, period, startDate, endDate);
  }

  latestScore(scope: PackScope, interval: number, today: string): Row | null {
    const file = this.files.scores;
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
