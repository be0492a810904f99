import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Row } from '../db/sql.js';
import { ENTRY_BYTES, FORMAT, MAGIC, SECTIONS, USER_FIELDS, tripIdHash, type Footer, type Section } from './format.js';
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

const utf8Less = (a: string, b: string): boolean => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) < 0;

/**
 * A serving pack opened for reading (see format.ts). Every lookup is scoped to one app and user
 * through the directory, reads that user's index entries and then only the payloads it answers
 * with, by positioned reads (the page cache keeps hot parts in memory; the process holds only the
 * directory). Answers are the rows the sql/api files return, so the routes do not know which served them.
 */
export class ServingPack {
  private readonly users = new Map<string, number>();

  private constructor(
    private readonly fd: number,
    private readonly footer: Footer,
  ) {
    const a = footer.apps;
    for (let u = 0; u < footer.users.length; u += USER_FIELDS) {
      this.users.set(`${a[footer.users[u] as number]}\u0000${footer.users[u + 1]}`, u);
    }
  }

  static open(file: string): ServingPack {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const tail = Buffer.alloc(4 + MAGIC.length);
      if (size < tail.length) throw new Error(`serving pack ${file} is truncated`);
      readSync(fd, tail, 0, tail.length, size - tail.length);
      if (tail.toString('latin1', 4) !== MAGIC) throw new Error(`serving pack ${file} is not a pack or is truncated`);
      const footerLength = tail.readUInt32LE(0);
      const footerBytes = Buffer.alloc(footerLength);
      readSync(fd, footerBytes, 0, footerLength, size - tail.length - footerLength);
      const footer = JSON.parse(footerBytes.toString('utf8')) as Footer;
      if (footer.format !== FORMAT) throw new Error(`serving pack ${file} has format ${footer.format}; this API reads ${FORMAT}`);
      return new ServingPack(fd, footer);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  get version(): number {
    return this.footer.version;
  }

  /** Local times in the pack were written in the app's zone at publish; another zone is the SQL's job. */
  servesZone(appId: string, zone: string): boolean {
    return this.footer.zones[appId] === zone;
  }

  close(): void {
    closeSync(this.fd);
  }

  tripPage(scope: PackScope, q: PackTripPage): Row[] {
    const e = this.entries(scope, 'trips');
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
        const row = this.payloads(e, [i])[0] as Row;
        if (!utf8Less(String(row['trip_id']), q.afterTrip)) continue;
      }
      picked.push(i);
    }
    return this.payloads(e, picked);
  }

  tripDetail(scope: PackScope, tripId: string): { trip: Row; events: Row[] } | null {
    const e = this.entries(scope, 'trips');
    const tag = tripIdHash(tripId);
    for (let i = 0; i < e.count; i++) {
      if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== tag) continue;
      const [bytes] = this.read(e, i, i, true);
      const length = e.buf.readUInt32LE(i * ENTRY_BYTES + 12);
      const trip = JSON.parse(bytes.toString('utf8', 0, length)) as Row;
      if (trip['trip_id'] !== tripId) continue;
      return { trip, events: JSON.parse(bytes.toString('utf8', length)) as Row[] };
    }
    return null;
  }

  statistics(scope: PackScope, period: Period, startDate: string, endDate: string): Row[] {
    const e = this.entries(scope, 'stats');
    const first = epochDay(startDate);
    const last = epochDay(endDate);
    const wanted: number[] = [];
    for (let i = 0; i < e.count; i++) {
      const day = e.buf.readDoubleLE(i * ENTRY_BYTES);
      if (day > last) break;
      if (day >= first) wanted.push(i);
    }
    const days: DayStats[] = this.payloads(e, wanted).map((values, n) => {
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
    const e = this.entries(scope, 'scores');
    const until = epochDay(today);
    // newest evaluation first
    for (let i = 0; i < e.count; i++) {
      if (e.buf.readUInt32LE(i * ENTRY_BYTES + 8) !== interval) continue;
      if (e.buf.readDoubleLE(i * ENTRY_BYTES) > until) continue;
      return this.payloads(e, [i])[0] ?? null;
    }
    return null;
  }

  /** The user's index entries of one section (none for a user this pack does not know). */
  private entries(scope: PackScope, section: Section): Entries {
    const u = this.users.get(`${scope.appId}\u0000${scope.userId}`);
    if (u === undefined) return { buf: Buffer.alloc(0), count: 0 };
    const s = SECTIONS.indexOf(section);
    const first = this.footer.users[u + 2 + 2 * s] as number;
    const count = this.footer.users[u + 3 + 2 * s] as number;
    const buf = Buffer.allocUnsafe(count * ENTRY_BYTES);
    if (count > 0) this.readFully(buf, this.footer.sections[section].indexOffset + first * ENTRY_BYTES);
    return { buf, count };
  }

  /** The payloads (not extras) of entries `at`, parsed, in that order. */
  private payloads(e: Entries, at: number[]): Row[] {
    if (at.length === 0) return [];
    // one read covering them all: a page of trips is a run of neighbouring entries
    const lo = Math.min(...at);
    const hi = Math.max(...at);
    const [bytes, base] = this.read(e, lo, hi, false);
    return at.map((i) => {
      const start = e.buf.readDoubleLE(i * ENTRY_BYTES + 24) - base;
      return JSON.parse(bytes.toString('utf8', start, start + e.buf.readUInt32LE(i * ENTRY_BYTES + 12))) as Row;
    });
  }

  /** Bytes from entry `lo`'s payload to the end of entry `hi`'s payload (and extra, if asked). */
  private read(e: Entries, lo: number, hi: number, withExtra: boolean): [Buffer, number] {
    let start = Infinity;
    let end = 0;
    for (const i of [lo, hi]) {
      const offset = e.buf.readDoubleLE(i * ENTRY_BYTES + 24);
      const length = e.buf.readUInt32LE(i * ENTRY_BYTES + 12) + (withExtra ? e.buf.readUInt32LE(i * ENTRY_BYTES + 16) : 0);
      start = Math.min(start, offset);
      end = Math.max(end, offset + length);
    }
    const bytes = Buffer.allocUnsafe(end - start);
    this.readFully(bytes, start);
    return [bytes, start];
  }

  private readFully(buf: Buffer, position: number): void {
    for (let done = 0; done < buf.length; ) {
      const n = readSync(this.fd, buf, done, buf.length - done, position + done);
      if (n === 0) throw new Error('serving pack ended early');
      done += n;
    }
  }
}
