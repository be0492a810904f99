import type { DuckDBConnection } from '@duckdb/node-api';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import type { LineIndex } from './scan-file.js';
import { runFile } from '../db/sql.js';

/** `line_index(ordinal, line_no)`: the n-th non-blank line's number, for stg_line_numbers.sql. */
export async function appendLineIndex(conn: DuckDBConnection, lines: LineIndex): Promise<void> {
  await runFile(conn, 'ops/load/line_index');
  const appender = await conn.createAppender('line_index', 'main', 'temp');
  for (let i = 0; i < lines.count; i++) {
    appender.appendBigInt(BigInt(i));
    appender.appendBigInt(BigInt(lines.lineNo[i] as number));
    appender.endRow();
  }
  appender.closeSync();
}

/**
 * Adds the text of the given lines (ascending numbers) to `raw_lines`: the quarantine keeps a
 * rejected record's line as delivered. A plain file is read at the lines' offsets; a gzip file
 * is decompressed again up to the last of them (rejections are few, gzip is rarely large).
 */
export async function appendRawLines(
  conn: DuckDBConnection,
  path: string,
  lines: LineIndex,
  wanted: number[],
): Promise<void> {
  if (wanted.length === 0) return;
  const texts = /\.gz$/i.test(path)
    ? await linesFromGzip(path, lines, wanted)
    : await linesAtOffsets(path, lines, wanted);
  const appender = await conn.createAppender('raw_lines', 'main', 'temp');
  for (const [lineNo, text] of texts) {
    appender.appendBigInt(BigInt(lineNo));
    appender.appendVarchar(text);
    appender.endRow();
  }
  appender.closeSync();
}

/** Index positions in `lines` of the wanted line numbers (both ascending). */
function positions(lines: LineIndex, wanted: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  for (const lineNo of wanted) {
    while (i < lines.count && (lines.lineNo[i] as number) < lineNo) i++;
    if (i < lines.count && lines.lineNo[i] === lineNo) out.push(i);
  }
  return out;
}

async function linesAtOffsets(path: string, lines: LineIndex, wanted: number[]): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  const file = await open(path, 'r');
  try {
    for (const i of positions(lines, wanted)) {
      const start = lines.start[i] as number;
      const buf = Buffer.alloc((lines.end[i] as number) - start);
      const { bytesRead } = await file.read(buf, 0, buf.length, start);
      out.push([lines.lineNo[i] as number, buf.subarray(0, bytesRead).toString('utf8')]);
    }
  } finally {
    await file.close();
  }
  return out;
}

async function linesFromGzip(path: string, lines: LineIndex, wanted: number[]): Promise<Array<[number, string]>> {
  const ranges = positions(lines, wanted).map((i) => ({
    lineNo: lines.lineNo[i] as number,
    start: lines.start[i] as number,
    end: lines.end[i] as number,
    parts: [] as Buffer[],
  }));
  if (ranges.length === 0) return [];
  const last = (ranges[ranges.length - 1] as { end: number }).end;
  let offset = 0;
  const stream = createReadStream(path).pipe(createGunzip());
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const chunkEnd = offset + chunk.length;
    for (const r of ranges) {
      if (r.end <= offset || r.start >= chunkEnd) continue;
      r.parts.push(chunk.subarray(Math.max(r.start - offset, 0), Math.min(r.end - offset, chunk.length)));
    }
    offset = chunkEnd;
    if (offset >= last) {
      stream.destroy();
      break;
    }
  }
  return ranges.map((r) => [r.lineNo, Buffer.concat(r.parts).toString('utf8')]);
}
