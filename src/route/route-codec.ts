/**
 * One trip's block in a route file: its four columns (time in epoch ms, lat, lng, speed), each
 * stored exactly. Positions arrive as decimals (an SDK sends 52.562882, a speed 7.79, a time in
 * whole milliseconds), so a column whose every value is an integer count of 10^-k (k <= 9) is
 * stored as those integers, each as the zigzag varint of its difference from the one before:
 * one or two bytes a value at one point a second, where a float64 takes eight. A column where
 * that is not exact (a position with every bit of its double used, -0, NaN, an infinity, an
 * integer of 2^50 or more) is stored as float64. Either way the decoded doubles are bit for bit
 * the ones given (test/serving/route-codec.test.ts).
 *
 * Column layout: one byte, the scale k, or RAW; then n float64 (RAW) or n varints.
 */
const RAW = 0xff;
const MAX_SCALE = 9;
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);
/** Integers kept below 2^50: a difference of two then stays below 2^51, its zigzag below 2^52. */
const MAX_INT = 2 ** 50;

/** Bytes a block of n points takes at most (every column raw, or every varint eight bytes). */
export const maxBlockBytes = (n: number): number => 4 * (1 + 8 * n);

/** The smallest k with every value exactly an integer count of 10^-k, or -1. */
function scaleOf(values: Float64Array): number {
  for (let k = 0; k <= MAX_SCALE; k++) {
    const p = POW10[k] as number;
    let exact = true;
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      // + 0 makes -0 a 0, as the decoder's integers are: a -0 then fails the comparison
      const int = Math.round(v * p) + 0;
      if (!(Math.abs(int) < MAX_INT) || !Object.is(int / p, v)) {
        exact = false;
        break;
      }
    }
    if (exact) return k;
  }
  return -1;
}

/** Encodes the four columns (of equal length) into `out` from `at`; returns where it ended. */
export function encodeBlock(columns: readonly Float64Array[], out: Buffer, at: number): number {
  let pos = at;
  for (const values of columns) {
    const k = scaleOf(values);
    if (k < 0) {
      out[pos++] = RAW;
      for (let i = 0; i < values.length; i++, pos += 8) out.writeDoubleLE(values[i] as number, pos);
      continue;
    }
    out[pos++] = k;
    const p = POW10[k] as number;
    let prev = 0;
    for (let i = 0; i < values.length; i++) {
      const int = Math.round((values[i] as number) * p) + 0;
      const d = int - prev;
      prev = int;
      let z = d >= 0 ? 2 * d : -2 * d - 1;
      // base-128 digits, low first, by arithmetic: the values exceed 32 bits
      while (z >= 128) {
        out[pos++] = (z % 128) | 128;
        z = Math.floor(z / 128);
      }
      out[pos++] = z;
    }
  }
  return pos;
}

/**
 * Decodes a block of n points from `bytes[at, end)` into `into` (four columns of n, one after the
 * other). Throws when the bytes do not hold exactly that (a block cut short, longer, or a value the
 * encoder cannot write); a bit flipped inside a value is not detected, as in a float64 layout.
 */
export function decodeBlock(bytes: Uint8Array, at: number, end: number, n: number, into: Float64Array): void {
  let pos = at;
  for (let c = 0; c < 4; c++) {
    const base = c * n;
    if (pos >= end) throw new Error('route block shorter than its points');
    const k = bytes[pos++];
    if (k === RAW) {
      if (pos + 8 * n > end) throw new Error('route block shorter than its points');
      // a copy, not a read per value: `into` is aligned, the bytes need not be
      new Uint8Array(into.buffer, into.byteOffset + 8 * base, 8 * n).set(bytes.subarray(pos, pos + 8 * n));
      pos += 8 * n;
      continue;
    }
    if (k === undefined || k > MAX_SCALE) throw new Error(`route block column of unknown kind ${String(k)}`);
    const p = POW10[k] as number;
    let prev = 0;
    for (let i = 0; i < n; i++) {
      if (pos >= end) throw new Error('route block shorter than its points');
      let z = bytes[pos++] as number;
      // nearly every value is one or two bytes: a small integer, its zigzag undone by bit operations
      if (z >= 128) {
        if (pos >= end) throw new Error('route block shorter than its points');
        let byte = bytes[pos++] as number;
        z = (z & 127) | ((byte & 127) << 7);
        // longer ones by arithmetic, as they exceed 32 bits (the integers reach 2^52)
        for (let scale = 16384; byte >= 128; scale *= 128) {
          if (pos >= end) throw new Error('route block shorter than its points');
          // the encoder's values stay below 2^52: eight bytes at most
          if (scale > 2 ** 49) throw new Error('route block value longer than eight bytes');
          byte = bytes[pos++] as number;
          z += (byte & 127) * scale;
        }
      }
      const d = z < 2147483648 ? (z >>> 1) ^ -(z & 1) : z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      prev += d;
      // a division, not a product with 10^-k: it is what the encoder checked, bit for bit
      into[base + i] = prev / p;
    }
  }
  if (pos !== end) throw new Error('route block longer than its points');
}
