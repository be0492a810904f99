import { ENTRY_BYTES, utf8Less, type Section } from './format.js';
import type { Entries, SectionFile } from './section-file.js';

/**
 * One user's rows of a section across its layers, as they are now: row n is entry `index[n]` of
 * layer `layer[n]`, in the section's order (trips newest first, days oldest first).
 */
export class UserRows {
  readonly layer: number[] = [];
  readonly index: number[] = [];
  private readonly ids = new Map<number, string>();

  constructor(
    readonly files: SectionFile[],
    readonly entries: Entries[],
  ) {}

  get count(): number {
    return this.index.length;
  }

  key(n: number): number {
    return entryKey(this.entries[this.layer[n] as number] as Entries, this.index[n] as number);
  }

  aux(n: number): number {
    return entryAux(this.entries[this.layer[n] as number] as Entries, this.index[n] as number);
  }

  /** A trip row's id (the payload's first field), parsed once. */
  tripId(n: number): string {
    return this.idAt(this.layer[n] as number, this.index[n] as number);
  }

  /** The id of entry i of layer l (tripId() by layer and entry). */
  idAt(l: number, i: number): string {
    let id = this.ids.get(l * 2 ** 32 + i);
    if (id === undefined) {
      id = idOf((this.files[l] as SectionFile).payloads(this.entries[l] as Entries, [i])[0]);
      this.ids.set(l * 2 ** 32 + i, id);
    }
    return id;
  }

  /** The payloads of rows `ns` (ascending), parsed, in that order: one read per layer. */
  payloads(ns: number[]): unknown[] {
    const out: unknown[] = new Array(ns.length);
    const byLayer = new Map<number, number[]>();
    ns.forEach((n, k) => {
      const l = this.layer[n] as number;
      const list = byLayer.get(l);
      if (list) list.push(k);
      else byLayer.set(l, [k]);
    });
    for (const [l, ks] of byLayer) {
      const parsed = (this.files[l] as SectionFile).payloads(
        this.entries[l] as Entries,
        ks.map((k) => this.index[ns[k] as number] as number),
      );
      ks.forEach((k, j) => (out[k] = parsed[j]));
    }
    return out;
  }
}

const entryKey = (e: Entries, i: number): number => e.buf.readDoubleLE(i * ENTRY_BYTES);
const entryAux = (e: Entries, i: number): number => e.buf.readUInt32LE(i * ENTRY_BYTES + 8);
const idOf = (payload: unknown): string => String((payload as unknown[])[0]);

/** How many layers (newest first) a user's rows come from: down to the first that purged the user, which still has its own rows. */
function depthOf(files: SectionFile[], appId: string, userId: number): number {
  let depth = 0;
  while (depth < files.length) if (files[depth++]?.purges(appId, userId)) break;
  return depth;
}

/**
 * A user's rows of a section whose layers are `files`, newest first: each layer's rows, less
 * those a newer layer replaced (the same trip id; the same day) and all rows below a layer that
 * purged the user, in the section's order (trips: start desc, then trip id desc in UTF-8 bytes as
 * DuckDB orders; days ascending).
 */
export function visibleRows(files: SectionFile[], section: Section, appId: string, userId: number): UserRows {
  const layers = files.slice(0, depthOf(files, appId, userId));
  return mergeVisible(
    new UserRows(
      layers,
      layers.map((f) => f.entries(appId, userId)),
    ),
    section,
  );
}

/**
 * Merges the layers' entries (each already in the section's order) into `rows`' visible rows: a
 * row is dropped when a newer layer holds the same trip (or day); the rest are merged in order,
 * one pass over the layers' heads (at most a dozen layers).
 */
function mergeVisible(rows: UserRows, section: Section): UserRows {
  const { entries } = rows;
  const used = entries.flatMap((e, l) => (e.count > 0 ? [l] : []));
  if (used.length <= 1) {
    // one layer (the usual case): its rows as stored
    const l = used[0];
    if (l !== undefined)
      for (let i = 0; i < (entries[l] as Entries).count; i++) {
        rows.layer.push(l);
        rows.index.push(i);
      }
    return rows;
  }
  const trips = section === 'trips';
  // a row's identity across layers: a trip's id hash (then its id), a day, a score's day and interval (30 or 90)
  const idOfEntry = (l: number, i: number): number =>
    trips
      ? entryAux(entries[l] as Entries, i)
      : entryKey(entries[l] as Entries, i) * 128 + entryAux(entries[l] as Entries, i);
  // the rows each layer keeps: not replaced by a newer layer (only newer layers are indexed, and they are small)
  const newer = new Map<number, [number, number][]>();
  const kept = used.map((l, u) => {
    const e = entries[l] as Entries;
    const keep: number[] = [];
    for (let i = 0; i < e.count; i++) {
      const same = newer.get(idOfEntry(l, i));
      // trips: the id's hash matched; only then are the ids compared
      if (same && (!trips || same.some(([m, j]) => rows.idAt(m, j) === rows.idAt(l, i)))) continue;
      keep.push(i);
    }
    if (u < used.length - 1) {
      for (const i of keep) {
        const list = newer.get(idOfEntry(l, i));
        if (list) list.push([l, i]);
        else newer.set(idOfEntry(l, i), [[l, i]]);
      }
    }
    return keep;
  });
  // whether row (l, i) comes before row (m, j) in the section's order
  const before = (l: number, i: number, m: number, j: number): boolean => {
    const a = entryKey(entries[l] as Entries, i);
    const b = entryKey(entries[m] as Entries, j);
    if (!trips) {
      // scores: by interval, then by day; statistics (aux 0): by day
      const x = entryAux(entries[l] as Entries, i);
      const y = entryAux(entries[m] as Entries, j);
      return x < y || (x === y && a < b);
    }
    if (a !== b) return a > b;
    return utf8Less(rows.idAt(m, j), rows.idAt(l, i));
  };
  const head = kept.map(() => 0);
  for (;;) {
    let best = -1;
    for (let u = 0; u < used.length; u++) {
      if ((head[u] as number) >= (kept[u] as number[]).length) continue;
      if (
        best < 0 ||
        before(
          used[u] as number,
          (kept[u] as number[])[head[u] as number] as number,
          used[best] as number,
          (kept[best] as number[])[head[best] as number] as number,
        )
      )
        best = u;
    }
    if (best < 0) return rows;
    rows.layer.push(used[best] as number);
    rows.index.push((kept[best] as number[])[head[best] as number] as number);
    head[best] = (head[best] as number) + 1;
  }
}
