import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBlock, encodeBlock, maxBlockBytes } from '../../src/route/route-codec.js';
import {
  readRoute,
  rewriteRouteFileWithout,
  RouteFileDamagedError,
  RouteFileWriter,
  routeFileIsCurrent,
  verifyRouteFile,
  type RoutePoints,
} from '../../src/route/route-file.js';

/** A seeded generator, so a failure names the same columns every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The columns' bytes: equal bytes means every bit, -0 and NaN payloads included. */
const bits = (columns: readonly Float64Array[]): Buffer =>
  Buffer.concat(columns.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));

function roundTrip(columns: Float64Array[]): { decoded: Float64Array[]; bytes: number } {
  const n = columns[0]?.length ?? 0;
  const out = Buffer.alloc(maxBlockBytes(n) + 7);
  // an offset that is not a multiple of 8: float64 columns must not rely on alignment
  const end = encodeBlock(columns, out, 7);
  const into = new Float64Array(4 * n);
  decodeBlock(out, 7, end, n, into);
  return { decoded: [0, 1, 2, 3].map((c) => into.subarray(c * n, (c + 1) * n)), bytes: end - 7 };
}

/** An SDK's trip: whole milliseconds one second apart, positions to 6 decimals, speed to 2. */
function sdkTrip(rnd: () => number, n: number): Float64Array[] {
  const t = new Float64Array(n);
  const lat = new Float64Array(n);
  const lng = new Float64Array(n);
  const speed = new Float64Array(n);
  let la = 52.5 + rnd() * 0.1;
  let lo = 13.3 + rnd() * 0.1;
  for (let i = 0; i < n; i++) {
    t[i] = 1795480219776 + i * 1000 + (rnd() < 0.05 ? Math.floor(rnd() * 40) : 0);
    la += (rnd() - 0.5) * 0.0004;
    lo += (rnd() - 0.5) * 0.0004;
    // as a JSON reader gives them: the double nearest to the decimal text
    lat[i] = Number(la.toFixed(6));
    lng[i] = Number(lo.toFixed(6));
    speed[i] = Number((rnd() * 40).toFixed(2));
  }
  return [t, lat, lng, speed];
}

describe('route block codec', () => {
  it('gives back every bit of an SDK trip in about a quarter of four float64 columns', () => {
    const rnd = random(1);
    for (const n of [1, 2, 3, 100, 3601]) {
      const columns = sdkTrip(rnd, n);
      const { decoded, bytes } = roundTrip(columns);
      expect(bits(decoded).equals(bits(columns))).toBe(true);
      if (n >= 100) expect(bytes).toBeLessThan(10 * n);
    }
  });

  it('stores a column as float64 where decimals are not exact, and still gives back every bit', () => {
    const rnd = random(2);
    const n = 500;
    const full = Float64Array.from({ length: n }, () => (rnd() - 0.5) * 360);
    const [t, , lng, speed] = sdkTrip(rnd, n) as [Float64Array, Float64Array, Float64Array, Float64Array];
    const { decoded, bytes } = roundTrip([t, full, lng, speed]);
    expect(bits(decoded).equals(bits([t, full, lng, speed]))).toBe(true);
    expect(bytes).toBeGreaterThan(8 * n);
  });

  it('keeps the values no decimal scale holds: -0, NaN, infinities, the smallest and largest doubles, integers past 2^50', () => {
    const specials = [
      0,
      -0,
      NaN,
      Infinity,
      -Infinity,
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      Number.MAX_VALUE,
      2 ** 50,
      2 ** 53,
      -(2 ** 52) + 1,
      0.1,
      1e-9,
      123456.789,
      0.30000000000000004,
    ];
    for (const v of specials) {
      // each alone, and each in a column of otherwise exact decimals
      for (const column of [Float64Array.of(v), Float64Array.of(1.25, v, 3.5, 0)]) {
        const others = [0, 1, 2].map(() => new Float64Array(column.length).fill(7));
        const columns = [column, ...others];
        const { decoded } = roundTrip(columns);
        expect(bits(decoded).equals(bits(columns)), String(v)).toBe(true);
      }
    }
  });

  it('agrees bit for bit over random columns of every kind', () => {
    const rnd = random(3);
    const kinds: (() => number)[] = [
      () => Math.round((rnd() - 0.5) * 2e6) / 1e3, // three decimals
      () => Number(((rnd() - 0.5) * 360).toFixed(9)), // nine decimals
      () => Number(((rnd() - 0.5) * 1e6).toFixed(Math.floor(rnd() * 10))), // mixed decimals
      () => Math.floor(rnd() * 2 ** 51) * (rnd() < 0.5 ? -1 : 1), // large integers
      () => (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20), // any double
    ];
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(rnd() * 300);
      const columns = [0, 1, 2, 3].map(() => {
        const kind = kinds[Math.floor(rnd() * kinds.length)] as () => number;
        return Float64Array.from({ length: n }, kind);
      });
      const { decoded } = roundTrip(columns);
      expect(bits(decoded).equals(bits(columns)), `round ${round}`).toBe(true);
    }
  });

  it('refuses a block cut short, with bytes to spare, or with a value longer than the encoder writes', () => {
    const columns = sdkTrip(random(4), 50);
    const out = Buffer.alloc(maxBlockBytes(50));
    const end = encodeBlock(columns, out, 0);
    expect(() => decodeBlock(out, 0, end - 1, 50, new Float64Array(200))).toThrow(/shorter/);
    expect(() => decodeBlock(out, 0, end + 1, 50, new Float64Array(200))).toThrow(/longer/);
    // a varint of nine bytes, which the encoder never writes (its values stay below 2^52)
    const nine = Buffer.from([0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0, 0, 0]);
    expect(() => decodeBlock(nine, 0, nine.length, 1, new Float64Array(4))).toThrow(/eight bytes/);
    // the same value in eight bytes is read: the limit is the encoder's, not one byte sooner
    const eight = Buffer.from([0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0, 0, 0]);
    const into = new Float64Array(4);
    decodeBlock(eight, 0, eight.length, 1, into);
    expect(Array.from(into)).toEqual([2 ** 48, 0, 0, 0]);
  });
});

describe('route files', () => {
  const points = (columns: Float64Array[]): RoutePoints => ({
    t: columns[0]!,
    lat: columns[1]!,
    lng: columns[2]!,
    speed: columns[3]!,
  });
  const copy = (p: RoutePoints | null | undefined): Float64Array[] =>
    p ? [p.t, p.lat, p.lng, p.speed].map((c) => Float64Array.from(c)) : [];

  it('reads a file written in the float64 layout, and a purge rewrites it in the checked compact one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-file-'));
    try {
      const rnd = random(5);
      const trips = [sdkTrip(rnd, 40), sdkTrip(rnd, 0), sdkTrip(rnd, 7)];
      // the float64 layout, by hand: four columns per trip, the index without block lengths, DDSROUT1
      const blocks: Buffer[] = [];
      const index: [string, string, number, number][] = [];
      let offset = 0;
      trips.forEach((columns, i) => {
        const block = bits(columns);
        index.push(['app', `trip-${i}`, offset, columns[0]!.length]);
        blocks.push(block);
        offset += block.length;
      });
      const json = Buffer.from(JSON.stringify(index));
      const footer = Buffer.alloc(16);
      footer.writeDoubleLE(json.length, 0);
      footer.write('DDSROUT1', 8, 'latin1');
      const old = join(dir, 'v1.route');
      writeFileSync(old, Buffer.concat([...blocks, json, footer]));

      trips.forEach((columns, i) =>
        expect(bits(copy(readRoute(old, 'app', `trip-${i}`))).equals(bits(columns))).toBe(true),
      );
      expect(rewriteRouteFileWithout(old, (_app, trip) => trip === 'trip-1')).toBe(true);
      expect(readFileSync(old).subarray(-8).toString('latin1')).toBe('DDSROUT3');
      expect(readRoute(old, 'app', 'trip-1')).toBeNull();
      for (const i of [0, 2]) expect(bits(copy(readRoute(old, 'app', `trip-${i}`))).equals(bits(trips[i]!))).toBe(true);
      expect(readRoute(join(dir, 'missing.route'), 'app', 'trip-0')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes, reads back and purges in the compact layout, a third of the float64 size or less for SDK positions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-file-'));
    try {
      const rnd = random(6);
      const trips = Array.from({ length: 20 }, (_, i) => sdkTrip(rnd, i === 3 ? 0 : 200 + i * 50));
      const file = join(dir, 'v2.route');
      const writer = new RouteFileWriter(`${file}.tmp`);
      trips.forEach((columns, i) => writer.add('app', `trip-${i}`, points(columns)));
      writer.finish(file);
      const total = trips.reduce((sum, c) => sum + c[0]!.length, 0);
      expect(readFileSync(file).length).toBeLessThan((32 * total) / 3);
      // read in an order unlike the file's: each read leaves the shared block to the next
      for (const i of [19, 0, 3, 7, 3, 12])
        expect(bits(copy(readRoute(file, 'app', `trip-${i}`))).equals(bits(trips[i]!))).toBe(true);
      expect(readRoute(file, 'app', 'trip-20')).toBeNull();
      expect(rewriteRouteFileWithout(file, (_app, trip) => trip === 'trip-5')).toBe(true);
      expect(rewriteRouteFileWithout(file, (_app, trip) => trip === 'trip-5')).toBe(false);
      for (const [i, columns] of trips.entries()) {
        const read = readRoute(file, 'app', `trip-${i}`);
        if (i === 5) expect(read).toBeNull();
        else expect(bits(copy(read)).equals(bits(columns))).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A written file of 20 trips, and their columns. */
  function written(dir: string, seed: number): { file: string; trips: Float64Array[][] } {
    const rnd = random(seed);
    const trips = Array.from({ length: 20 }, (_, i) => sdkTrip(rnd, 100 + i * 10));
    const file = join(dir, 'v3.route');
    const writer = new RouteFileWriter(`${file}.tmp`);
    trips.forEach((columns, i) => writer.add('app', `trip-${i}`, points(columns)));
    writer.finish(file);
    return { file, trips };
  }

  it('refuses a file cut short and a flipped byte in a block or in the index, where it is read, and never rewrites one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-file-'));
    try {
      const { file, trips } = written(dir, 7);
      const intact = readFileSync(file);
      // a byte of trip-4's block: the index says where it is (its offset: the sum of the blocks before)
      const index = JSON.parse(
        intact.toString('utf8', intact.length - 24 - intact.readDoubleLE(intact.length - 24), intact.length - 24),
      ) as [string, string, number, number, number, number][];
      const [, , offset, , bytes] = index[4]!;
      const flipped = Buffer.from(intact);
      flipped[offset + Math.floor(bytes / 2)]! ^= 0x01;
      writeFileSync(file, flipped);
      expect(() => readRoute(file, 'app', 'trip-4')).toThrow(RouteFileDamagedError);
      expect(() => readRoute(file, 'app', 'trip-4')).toThrow(/does not match its CRC-32/);
      // the other blocks are intact and served
      expect(bits(copy(readRoute(file, 'app', 'trip-5'))).equals(bits(trips[5]!))).toBe(true);
      expect(() => verifyRouteFile(file)).toThrow(RouteFileDamagedError);
      // a purge that keeps trip-4 refuses to rewrite (and so re-seal) the damaged block, and leaves the file as it is
      expect(() => rewriteRouteFileWithout(file, (_app, trip) => trip === 'trip-0')).toThrow(RouteFileDamagedError);
      expect(readFileSync(file).equals(flipped)).toBe(true);

      // a byte of the index
      const badIndex = Buffer.from(intact);
      badIndex[intact.length - 30]! ^= 0x04;
      writeFileSync(file, badIndex);
      expect(() => readRoute(file, 'app', 'trip-1')).toThrow(/index does not match its CRC-32/);
      expect(() => routeFileIsCurrent(file)).toThrow(RouteFileDamagedError);

      // cut short: anywhere, the magic is gone
      for (const length of [0, 10, offset, intact.length - 1]) {
        writeFileSync(file, intact.subarray(0, length));
        expect(() => readRoute(file, 'app', 'trip-1'), `${length} bytes`).toThrow(RouteFileDamagedError);
      }
      writeFileSync(file, intact);
      expect(routeFileIsCurrent(file)).toBe(true);
      expect(() => verifyRouteFile(file)).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a DDSROUT2 file (no checksums) and says it is of an older format; rewritten, it is current and reads the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-file-'));
    try {
      const { file, trips } = written(dir, 8);
      // the DDSROUT2 layout: the same blocks, the index without CRCs, a 16-byte footer
      const bytes = readFileSync(file);
      const indexLength = bytes.readDoubleLE(bytes.length - 24);
      const start = bytes.length - 24 - indexLength;
      const index = (JSON.parse(bytes.toString('utf8', start, start + indexLength)) as unknown[][]).map((e) =>
        e.slice(0, 5),
      );
      const json = Buffer.from(JSON.stringify(index));
      const footer = Buffer.alloc(16);
      footer.writeDoubleLE(json.length, 0);
      footer.write('DDSROUT2', 8, 'latin1');
      writeFileSync(file, Buffer.concat([bytes.subarray(0, start), json, footer]));
      expect(routeFileIsCurrent(file)).toBe(false);
      for (const i of [0, 9, 19])
        expect(bits(copy(readRoute(file, 'app', `trip-${i}`))).equals(bits(trips[i]!))).toBe(true);
      expect(rewriteRouteFileWithout(file, () => false, true)).toBe(false);
      expect(routeFileIsCurrent(file)).toBe(true);
      expect(readFileSync(file).equals(bytes)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
