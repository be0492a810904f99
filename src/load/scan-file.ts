import { createHash } from 'node:crypto';
import { closeSync, constants, createReadStream, fstatSync, openSync, writeSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { InputError } from '../errors.js';
import { ChangedDuringLoadError, sameIdentity, type FileIdentity } from './file-identity.js';

/** The longest line a file may hold: a day-long trip at 1 Hz is about 6 MiB. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/**
 * Where each non-blank line of an NDJSON file is: its 1-based number and its byte range (of the
 * decompressed text, without the line break), in file order. Kept in typed arrays: a file of
 * millions of short lines must not cost millions of objects.
 */
export class LineIndex {
  count = 0;
  /** Whether every non-blank line starts with `{` (after white space): only objects. */
  allObjects = true;
  lineNo: Float64Array<ArrayBuffer> = new Float64Array(1024);
  start: Float64Array<ArrayBuffer> = new Float64Array(1024);
  end: Float64Array<ArrayBuffer> = new Float64Array(1024);

  push(lineNo: number, start: number, end: number): void {
    if (this.count === this.lineNo.length) {
      this.lineNo = grow(this.lineNo);
      this.start = grow(this.start);
      this.end = grow(this.end);
    }
    this.lineNo[this.count] = lineNo;
    this.start[this.count] = start;
    this.end[this.count] = end;
    this.count++;
  }

  /**
   * Consecutive runs of lines holding at most `bytes` of text each (a longer line alone), as
   * [first line number, last line number] pairs: how a file too large to parse at once is split.
   */
  ranges(bytes: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let first = 0;
    let size = 0;
    for (let i = 0; i < this.count; i++) {
      const length = (this.end[i] as number) - (this.start[i] as number);
      if (i > first && size + length > bytes) {
        out.push([this.lineNo[first] as number, this.lineNo[i - 1] as number]);
        first = i;
        size = 0;
      }
      size += length;
    }
    if (this.count > first) out.push([this.lineNo[first] as number, this.lineNo[this.count - 1] as number]);
    return out;
  }
}

function grow(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

export interface FileScan {
  /** SHA-256 of the file's bytes as stored (compressed for .gz): the ledger key. */
  key: string;
  /** For NDJSON: its non-blank lines. */
  lines?: LineIndex;
}

/**
 * Reads a file once: its SHA-256 and, for NDJSON (gzip decompressed on the way), where its lines
 * are. Refuses a file that is not text a load can take, with the place: invalid UTF-8 (the byte and
 * line), a line over 32 MiB, a damaged gzip stream. DuckDB reads a truncated gzip file as a
 * shorter one without complaint, so integrity is checked here.
 *
 * @example const { key, lines } = await scanFile('landing/day.ndjson');
 */
export async function scanFile(
  path: string,
  ndjson: boolean,
  expected?: FileIdentity,
  /** Also write the text read (decompressed, for .gz) to this open file: a large file's slices are cut from it. */
  textTo?: number,
): Promise<FileScan> {
  const hash = createHash('sha256');
  // never through a link; and the file opened must be the one the load began with
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    asChange(error as Error);
  }
  const opened = fstatSync(fd);
  if ((expected && !sameIdentity(expected, opened)) || opened.nlink > 1) {
    closeSync(fd);
    throw new ChangedDuringLoadError(`changed_during_load: ${path} was replaced (or linked) before it was read`);
  }
  const source = createReadStream('', { fd, highWaterMark: 4 << 20 });
  source.on('data', (chunk) => hash.update(chunk as Buffer));
  const scanner = ndjson ? new LineScanner() : undefined;
  const sink = new Writable({
    highWaterMark: 4 << 20,
    write: (chunk: Buffer, _encoding, done) => {
      try {
        scanner?.feed(chunk);
        if (textTo !== undefined) writeSync(textTo, chunk);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
  if (/\.gz$/i.test(path)) {
    await pipeline(source, createGunzip(), sink).catch((error: Error) => {
      if (error instanceof InputError) throw error;
      throw new InputError(`not a complete gzip file (${error.message})`);
    });
  } else await pipeline(source, sink);
  scanner?.finish();
  return { key: hash.digest('hex'), lines: scanner?.lines };
}

/** SHA-256 of a file's bytes (a gzip file's stream checked whole): the ledger key. */
export async function fileKey(path: string): Promise<string> {
  return (await scanFile(path, false)).key;
}

/** A link swapped in after the listing (O_NOFOLLOW's ELOOP) is a change, not a bad file. */
function asChange(error: Error): never {
  if ((error as NodeJS.ErrnoException).code === 'ELOOP')
    throw new ChangedDuringLoadError(`changed_during_load: a symbolic link replaced the file`);
  throw error;
}

const LF = 0x0a;

/** Splits a stream of bytes into lines, checking each as it goes. */
class LineScanner {
  readonly lines = new LineIndex();
  private carry: Buffer = Buffer.alloc(0);
  /** Byte offset (in the text) of carry[0], and the number of the line that starts there. */
  private offset = 0;
  private lineNo = 1;

  feed(chunk: Buffer): void {
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(LF, pos);
      if (nl < 0) break;
      this.line(buf, pos, nl);
      pos = nl + 1;
    }
    if (buf.length - pos > MAX_LINE_BYTES) throw new InputError(`line ${this.lineNo} longer than 32 MiB`);
    this.offset += pos;
    this.carry = pos === buf.length ? Buffer.alloc(0) : buf.subarray(pos);
    // a short tail may still be a view of a large chunk: copy it so the chunk can be freed
    if (this.carry.length > 0 && this.carry.length < chunk.length / 4) this.carry = Buffer.from(this.carry);
  }

  finish(): void {
    if (this.carry.length > 0) this.line(this.carry, 0, this.carry.length);
  }

  /** One line: buf[from, to), without its LF. */
  private line(buf: Buffer, from: number, to: number): void {
    let end = to;
    if (end > from && buf[end - 1] === 0x0d) end--;
    if (end - from > MAX_LINE_BYTES) throw new InputError(`line ${this.lineNo} longer than 32 MiB`);
    const text = buf.subarray(from, end);
    if (!isUtf8(text))
      throw new InputError(`invalid UTF-8 at byte ${firstInvalidByte(text) + 1} of line ${this.lineNo}`);
    const first = firstNonSpace(buf, from, end);
    if (first >= 0) {
      if (buf[first] !== 0x7b) this.lines.allObjects = false;
      this.lines.push(this.lineNo, this.offset + from, this.offset + end);
    }
    this.lineNo++;
  }
}

/** Index of the first byte that is not JSON/regex white space, or -1 for a blank line. */
function firstNonSpace(buf: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const b = buf[i] as number;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0b && b !== 0x0c) return i;
  }
  return -1;
}

/** Offset of the first byte where `text` stops being UTF-8 (called only when it does). */
export function firstInvalidByte(text: Uint8Array): number {
  let i = 0;
  while (i < text.length) {
    const b = text[i] as number;
    const need =
      b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = text[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      // overlong three-byte forms, surrogates, and code points above U+10FFFF
      if (
        k === 1 &&
        ((b === 0xe0 && c < 0xa0) || (b === 0xed && c > 0x9f) || (b === 0xf0 && c < 0x90) || (b === 0xf4 && c > 0x8f))
      )
        return i;
    }
    i += need + 1;
  }
  return text.length;
}
