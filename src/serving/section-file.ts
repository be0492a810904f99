import { closeSync, existsSync, fstatSync, openSync, read, readSync, statSync } from 'node:fs';
import { Directory } from './directory.js';
import {
  ENTRY_BYTES,
  EXTRAS_SUFFIX,
  MAGIC,
  PURGED_FIELDS,
  SECTION_FORMAT,
  USER_FIELDS,
  type Footer,
  type Section,
} from './format.js';

export interface Entries {
  buf: Buffer;
  count: number;
}

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
      if (tail.toString('latin1', 4) !== MAGIC)
        throw new Error(`serving pack ${file} is not a pack of this format, or is truncated`);
      const footerLength = tail.readUInt32LE(0);
      const footerBytes = Buffer.alloc(footerLength);
      readSync(fd, footerBytes, 0, footerLength, size - tail.length - footerLength);
      const footer = JSON.parse(footerBytes.toString('utf8')) as Footer;
      if (footer.format !== SECTION_FORMAT[section] || footer.section !== section)
        throw new Error(
          `serving pack ${file} holds ${footer.section} in format ${footer.format}; expected ${section} in ${SECTION_FORMAT[section]}`,
        );
      return new SectionFile(fd, openSync(`${file}${EXTRAS_SUFFIX}`, 'r'), footer, file);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /**
   * Whether `file` would open as a layer of `section` (its magic at the end, the format and section
   * that lead its footer, its extras file) without reading the footer's user lists into a
   * directory: for a served layer of a section that has not changed, which a publish names again
   * as it is. Its bytes are the ones its manifest's SHA-256 vouches for, which readers check.
   */
  static readable(file: string, section: Section): boolean {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return false;
    }
    try {
      const size = fstatSync(fd).size;
      const tail = Buffer.alloc(4 + MAGIC.length);
      if (size < tail.length || readSync(fd, tail, 0, tail.length, size - tail.length) !== tail.length) return false;
      if (tail.toString('latin1', 4) !== MAGIC) return false;
      const footerLength = tail.readUInt32LE(0);
      if (footerLength > size - tail.length) return false;
      // the footer's JSON starts with its format and section (SectionWriter.finish writes them first)
      const head = Buffer.alloc(Math.min(footerLength, 64));
      readSync(fd, head, 0, head.length, size - tail.length - footerLength);
      const lead = /^\{"format":(\d+),"section":"(\w+)"/.exec(head.toString('latin1'));
      return (
        lead !== null &&
        Number(lead[1]) === SECTION_FORMAT[section] &&
        lead[2] === section &&
        existsSync(`${file}${EXTRAS_SUFFIX}`)
      );
    } finally {
      closeSync(fd);
    }
  }

  close(): void {
    closeSync(this.fd);
    closeSync(this.extrasFd);
  }

  /**
   * The layer at `file`, shared by the snapshots of this process that name it: a publish every few
   * seconds (load.js --watch) names the same base and older layers again, and opening a layer reads
   * and parses its whole directory on the event loop. Shared by identity (device, inode, size,
   * modification time), so a file written anew under the same name is opened anew. Each acquire is
   * paired with one release(); the last closes it.
   */
  static acquire(file: string, section: Section): SectionFile {
    const st = statSync(file);
    const key = `${section}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    const held = shared.get(key);
    if (held) {
      held.refs++;
      return held.file;
    }
    const opened = SectionFile.open(file, section);
    shared.set(key, { file: opened, refs: 1 });
    sharedKeys.set(opened, key);
    return opened;
  }

  /** Gives back an acquire()d layer; one opened with open() is closed. */
  release(): void {
    const key = sharedKeys.get(this);
    const held = key === undefined ? undefined : shared.get(key);
    if (!held || key === undefined) {
      this.close();
      return;
    }
    if (--held.refs > 0) return;
    shared.delete(key);
    sharedKeys.delete(this);
    this.close();
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
    if (this.index)
      return { buf: this.index.subarray(first * ENTRY_BYTES, (first + count) * ENTRY_BYTES), count, position: -1 };
    return {
      buf: Buffer.allocUnsafe(count * ENTRY_BYTES),
      count,
      position: this.footer.indexOffset + first * ENTRY_BYTES,
    };
  }

  /** The payloads of entries `at` (ascending), parsed, in that order: one read, as payloads are stored in entry order. */
  payloads(e: Entries, at: number[]): unknown[] {
    if (at.length === 0) return [];
    const first = at[0] as number;
    const last = at[at.length - 1] as number;
    const base = e.buf.readDoubleLE(first * ENTRY_BYTES + 24);
    const bytes = Buffer.allocUnsafe(
      e.buf.readDoubleLE(last * ENTRY_BYTES + 24) + e.buf.readUInt32LE(last * ENTRY_BYTES + 12) - base,
    );
    this.readFully(bytes, base);
    return at.map((i) => {
      const start = e.buf.readDoubleLE(i * ENTRY_BYTES + 24) - base;
      return JSON.parse(bytes.toString('utf8', start, start + e.buf.readUInt32LE(i * ENTRY_BYTES + 12))) as unknown;
    });
  }

  /**
   * Entry i's extra (a trip's events), parsed. Read synchronously by default, as index and
   * payloads are: while the files are in the page cache a read through libuv's thread pool costs
   * more than the read, because on two busy cores the pool's thread waits for a CPU (the trip
   * detail's p99 both ways: docs/benchmarks.md). `async` is for extras much larger than the page
   * cache on a slow disk: a miss then waits for the disk without holding the event loop.
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
    const n = await new Promise<number>((resolve, reject) =>
      read(fd, buf, done, buf.length - done, position + done, (error, bytes) =>
        error ? reject(error) : resolve(bytes),
      ),
    );
    if (n === 0) throw new Error('serving pack ended early');
    done += n;
  }
}

/** The layers open in this process through acquire(), by identity, and how many snapshots hold each. */
const shared = new Map<string, { file: SectionFile; refs: number }>();
const sharedKeys = new WeakMap<SectionFile, string>();
