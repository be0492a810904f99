import { createReadStream, createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Duplex, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { createHash, type Hash } from 'node:crypto';
import { fsyncDir, fsyncFile } from '../fsutil.js';

/** What a scrub did to one archive; `unreadable` when its bytes could not be read to the end (a truncated gzip). */
export type ScrubOutcome =
  | { records: number; removed: boolean; bytesRead: number }
  | { unreadable: true; bytesRead: number };

/** Enters a rewritten archive in the ledger: its key before and after, and its new size (before the rename). */
export type Ledger = (oldKey: string, newKey: string, bytes: number) => Promise<void>;

const LF = 0x0a;
const NEWLINE = Buffer.from('\n');

/**
 * Rewrites an NDJSON archive (gzipped or not) without the lines `belongs` claims, streaming: the
 * file is read once through zlib and written to a temp name as it goes, so memory holds a chunk and
 * the longest line, whatever the file's size. Lines work on bytes: a kept line is written back
 * exactly (even a failed file's invalid UTF-8), a removed one leaves an empty line so line numbers
 * stay right. Nothing claimed: the temp file goes and the archive is untouched. Nothing left: the
 * archive is removed. Else temp name, fsync, the ledger learns the new key, rename, fsync of the
 * folder. A read that fails (a damaged gzip) is `unreadable`; a failed write (a full disk) throws.
 */
export async function scrubNdjson(
  file: string,
  belongs: (line: Buffer) => boolean,
  ledger: Ledger,
): Promise<ScrubOutcome> {
  const gz = /\.gz$/i.test(file);
  const tmp = join(dirname(file), `.${basename(file)}.purge.tmp`);
  const before = counting(createHash('sha256'));
  const after = counting(createHash('sha256'));
  let records = 0;
  let kept = false;
  let readFailed = false;
  const source = createReadStream(file).on('error', () => (readFailed = true));
  const unzip = gz ? [createGunzip().on('error', () => (readFailed = true))] : [];

  const take = (line: Buffer, parts: Buffer[]): void => {
    if (belongs(line)) {
      records++;
      return;
    }
    if (line.length > 0) parts.push(line);
    if (!kept && line.length > 0 && line.toString('utf8').trim() !== '') kept = true;
  };
  let renamed = false;
  try {
    try {
      const stages: NodeJS.ReadWriteStream[] = [
        before.tap,
        ...unzip,
        Duplex.from((chunks: AsyncIterable<Buffer>) => splitLines(chunks, take)),
        ...(gz ? [createGzip()] : []),
        after.tap,
      ];
      await pipeline([source, ...stages, createWriteStream(tmp, { mode: 0o600 })]);
    } catch (error) {
      if (readFailed) return { unreadable: true, bytesRead: before.bytes() };
      throw error;
    }
    const bytesRead = before.bytes();
    if (records === 0) return { records, removed: false, bytesRead };
    if (!kept) {
      rmSync(file, { force: true });
      fsyncDir(dirname(file));
      return { records, removed: true, bytesRead };
    }
    fsyncFile(tmp);
    await ledger(before.digest(), after.digest(), after.bytes());
    renameSync(tmp, file);
    renamed = true;
    fsyncDir(dirname(file));
    return { records, removed: false, bytesRead };
  } finally {
    if (!renamed) rmSync(tmp, { force: true });
  }
}

/**
 * The text of `chunks` line by line through `take`, which pushes what is to be written of each line
 * (nothing, or the line); the newline after each line is always written, so line numbers stay.
 * Memory holds a chunk and the longest line.
 */
export async function* splitLines(
  chunks: AsyncIterable<Buffer>,
  take: (line: Buffer, parts: Buffer[]) => void,
): AsyncGenerator<Buffer> {
  let rest: Buffer[] = [];
  for await (const chunk of chunks) {
    const parts: Buffer[] = [];
    let at = 0;
    for (let end = chunk.indexOf(LF, at); end >= 0; end = chunk.indexOf(LF, at)) {
      const piece = chunk.subarray(at, end);
      take(rest.length > 0 ? Buffer.concat([...rest, piece]) : piece, parts);
      rest = [];
      parts.push(NEWLINE);
      at = end + 1;
    }
    // the start of a line that goes on in the next chunk: copied, not a view that holds the chunk
    if (at < chunk.length) rest.push(Buffer.from(chunk.subarray(at)));
    if (parts.length > 0) yield Buffer.concat(parts);
  }
  // the last line, without a newline after it
  const parts: Buffer[] = [];
  take(Buffer.concat(rest), parts);
  if (parts.length > 0) yield Buffer.concat(parts);
}

/** A pass-through stage that hashes and counts the bytes going by. */
export function counting(hash: Hash): { tap: Transform; bytes: () => number; digest: () => string } {
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { tap, bytes: () => bytes, digest: () => hash.digest('hex') };
}
