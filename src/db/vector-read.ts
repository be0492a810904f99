import type { DuckDBVector } from '@duckdb/node-api';
import { getDataFromPointer } from './duckdb.js';

/**
 * What @duckdb/node-api's vectors hold (its fields, not its declared API): numbers in a typed
 * array over the vector's data, text as DuckDB's 16-byte string entries, and the validity mask as
 * 64-bit words (null when every row is valid). Read directly because `getItem` tests validity
 * with BigInt arithmetic (some 100 bytes of garbage a value) and the client's string read makes a
 * string of every value, where a writer of bytes only needs them encoded again.
 * test/api/export-columns.test.ts checks these reads against `getItem`.
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
 * DuckDB's string entry at `offset` of `entries` (the vector's entries as one Buffer): its length,
 * then the bytes inline (up to 12) or a pointer to them. The inline bytes are a view of `entries`,
 * so they are good while the chunk is (use them before fetching the next); the others are a copy
 * out of DuckDB's memory.
 */
export function entryBytes(entries: Buffer, view: DataView, offset: number): Buffer {
  const length = view.getUint32(offset, true);
  if (length <= 12) return entries.subarray(offset + 4, offset + 4 + length);
  const bytes = getDataFromPointer(view.buffer as ArrayBuffer, view.byteOffset + offset + 8, length);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A VARCHAR vector's first `n` values as their UTF-8 bytes (null where NULL), no string made: the
 * serving pack writes them as they are, before its next chunk is fetched. Falls back to the client's `getItem` (and encodes) when
 * the vector does not hold string entries.
 */
export function textBytes(vector: DuckDBVector, n: number): (Buffer | null)[] {
  const data = vectorData(vector);
  const out = new Array<Buffer | null>(n);
  const view = data.dataView;
  if (!view || !data.validity) {
    for (let i = 0; i < n; i++) {
      const value = vector.getItem(i);
      out[i] = value === null ? null : Buffer.from(String(value), 'utf8');
    }
    return out;
  }
  const valid = validRows(data);
  const entries = Buffer.from(view.buffer, view.byteOffset, n * 16);
  for (let i = 0; i < n; i++) out[i] = valid(i) ? entryBytes(entries, view, i * 16) : null;
  return out;
}
