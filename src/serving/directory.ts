/**
 * A section file's directory of users (footer `users` or `purged`: flat tuples whose first two
 * fields are app index and user id) held in typed arrays, sorted by (app, user) and searched by
 * bisection.
 *
 * Why not a Map of "app\0user" strings: at the full size and five layers that is tens of MB of
 * small heap objects which every full GC marks, and the mark-compact pauses show in the API's p99.
 * Typed arrays live outside the V8 heap and are never traversed.
 */
export class Directory {
  /** Row r of app a is in [appStart[a], appStart[a + 1]). */
  private readonly appStart: Uint32Array;
  private readonly userIds: Float64Array;
  /** The tuple's other fields (first entry, entry count), by sorted row. */
  private readonly rest: Float64Array;
  private readonly width: number;

  constructor(apps: number, flat: number[], fields: number) {
    const n = flat.length / fields;
    this.width = fields - 2;
    const order = Array.from({ length: n }, (_, r) => r);
    const app = (r: number): number => flat[r * fields] as number;
    const user = (r: number): number => flat[r * fields + 1] as number;
    let sorted = true;
    for (let r = 1; r < n && sorted; r++)
      sorted = app(r - 1) < app(r) || (app(r - 1) === app(r) && user(r - 1) < user(r));
    if (!sorted) order.sort((x, y) => app(x) - app(y) || user(x) - user(y));
    this.appStart = new Uint32Array(apps + 1);
    this.userIds = new Float64Array(n);
    this.rest = new Float64Array(n * this.width);
    order.forEach((r, k) => {
      this.appStart[app(r) + 1] = (this.appStart[app(r) + 1] as number) + 1;
      this.userIds[k] = user(r);
      for (let f = 0; f < this.width; f++) this.rest[k * this.width + f] = flat[r * fields + 2 + f] as number;
    });
    for (let a = 0; a < apps; a++)
      this.appStart[a + 1] = (this.appStart[a + 1] as number) + (this.appStart[a] as number);
  }

  get size(): number {
    return this.userIds.length;
  }

  /** The sorted row of (app, user), or -1. */
  find(app: number, userId: number): number {
    if (app < 0 || app + 1 >= this.appStart.length) return -1;
    let lo = this.appStart[app] as number;
    let hi = this.appStart[app + 1] as number;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const id = this.userIds[mid] as number;
      if (id === userId) return mid;
      if (id < userId) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** Field f (0: the tuple's third field) of a row find() returned. */
  field(row: number, f: number): number {
    return this.rest[row * this.width + f] as number;
  }

  /** The user ids of one app, ascending. */
  usersOf(app: number): number[] {
    if (app < 0 || app + 1 >= this.appStart.length) return [];
    return Array.from(this.userIds.subarray(this.appStart[app], this.appStart[app + 1]));
  }
}
