import type { DuckDBVector } from '@duckdb/node-api';
import { DuckDBTypeId, getDataFromPointer } from './duckdb.js';

/**
 * What @duckdb/node-api's vectors hold (its fields, not its declared API): numbers in a typed
 * array over a copy of the vector's data, text as DuckDB's 16-byte string entries, and the
 * validity mask as 64-bit words (null when every row is valid). Read directly because `getItem`
 * tests validity with BigInt arithmetic (some 100 bytes of garbage a value) and the client's
 * string read makes a string of every value, where a writer of bytes only needs them encoded
 * again. test/api/export-columns.test.ts checks these reads against `getItem`.
 */
export interface VectorData {
  items?: Float64Array | Int32Array | BigInt64Array | Int16Array | Int8Array | Uint32Array | Float32Array;
  dataView?: DataView;
  validity?: { data: BigUint64Array | null; offset: number };
}

/** The vector's fields (VectorData); each may be missing in a client version that lays them out otherwise. */
export function vectorData(vector: DuckDBVector): VectorData {
  return vector as unknown as VectorData;
}

/** Whether row `i` of the vector is valid (not NULL), from its validity mask. */
export function validRows(data: VectorData): (i: number) => boolean {
  const words = data.validity?.data;
  if (!words) return () => true;
  const mask = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const offset = data.validity?.offset ?? 0;
  return (i) => ((mask[(i + offset) >> 3] as number) & (1 << ((i + offset) & 7))) !== 0;
}

/**
 * The bytes of a string entry longer than 12 bytes (at `offset` of the entries' `view`), copied
 * out of DuckDB's memory through the pointer the entry holds: read while the chunk is alive.
 */
export function pointedBytes(view: DataView, offset: number, length: number): Uint8Array {
  return getDataFromPointer(view.buffer as ArrayBuffer, view.byteOffset + offset + 8, length);
}

/** A VARCHAR vector's string entries, read in place: its entries as one Buffer, their view, and which rows are valid. */
export interface StringEntries {
  entries: Buffer;
  view: DataView;
  valid: (i: number) => boolean;
}

/**
 * The first `n` string entries of a VARCHAR vector (16 bytes each: the length, then the bytes
 * inline up to 12, or a pointer to them), or null for another type or a client version without
 * these fields (read those with `getItem`).
 */
export function stringEntries(vector: DuckDBVector, n: number): StringEntries | null {
  const data = vectorData(vector);
  const view = data.dataView;
  if (vector.type.typeId !== DuckDBTypeId.VARCHAR || !view || !data.validity) return null;
  return { entries: Buffer.from(view.buffer, view.byteOffset, n * 16), view, valid: validRows(data) };
}

/** A VARCHAR vector's values as a writer appends them one after another (textPieces). */
export interface TextPieces {
  /** Each row's length in bytes; -1 for NULL. */
  lengths: Int32Array;
  /** Every row's bytes in row order: concatenated, the pieces are row 0's bytes, then row 1's, and so on. */
  pieces: Uint8Array[];
}

/**
 * A VARCHAR vector's first `n` values as their UTF-8 bytes, no string made, for a writer that
 * appends them in row order (the serving pack). DuckDB keeps a chunk's strings one after another
 * in its heap, so a run of long strings each starting where the one before ends is copied out of
 * DuckDB's memory in one call: a chunk's payloads take a few calls rather than a call (and a
 * Buffer) a row. Inline bytes (12 or fewer) are views of the client's
 * copy of the entries; copied ones are read while the chunk is alive (call this before fetching
 * the next). Any other type goes through the client's `getItem`, as does a client version
 * without these fields.
 */
export function textPieces(vector: DuckDBVector, n: number): TextPieces {
  const lengths = new Int32Array(n);
  const pieces: Uint8Array[] = [];
  const strings = stringEntries(vector, n);
  if (!strings) {
    for (let i = 0; i < n; i++) {
      const value = vector.getItem(i);
      if (value === null) lengths[i] = -1;
      else {
        const bytes = Buffer.from(String(value), 'utf8');
        lengths[i] = bytes.length;
        pieces.push(bytes);
      }
    }
    return { lengths, pieces };
  }
  const { entries, view, valid } = strings;
  for (let i = 0; i < n; ) {
    if (!valid(i)) {
      lengths[i++] = -1;
      continue;
    }
    const offset = i * 16;
    const length = view.getUint32(offset, true);
    lengths[i++] = length;
    if (length <= 12) {
      if (length > 0) pieces.push(entries.subarray(offset + 4, offset + 4 + length));
      continue;
    }
    // the following long strings that start where this run ends: their bytes are the run's next
    // ones. The end address is kept as its two 32-bit halves, compared exactly
    let endLow = view.getUint32(offset + 8, true) + length;
    let endHigh = view.getUint32(offset + 12, true);
    let total = length;
    while (i < n && valid(i)) {
      const next = i * 16;
      const l = view.getUint32(next, true);
      if (endLow >= 0x1_0000_0000) {
        endLow -= 0x1_0000_0000;
        endHigh++;
      }
      if (l <= 12 || view.getUint32(next + 8, true) !== endLow || view.getUint32(next + 12, true) !== endHigh) break;
      lengths[i++] = l;
      endLow += l;
      total += l;
    }
    pieces.push(pointedBytes(view, offset, total));
  }
  return { lengths, pieces };
}
