import type { StateDb, StateQueries } from '../state/db.js';

export interface CellInfo {
  name: string;
  registeredAt: string;
  /** Whether new drivers are given to it. */
  accepting: boolean;
  /** Drivers given to it (moves included). */
  drivers: number;
}

/**
 * Which cell each driver's data lives in (docs/decisions.md, Cells), in the shared state store: a
 * cell is registered by its first job; a driver is given a cell once, when its account is made or
 * when a record of it is first seen, and keeps it until moved. The rule: the accepting cell with
 * the fewest drivers (ties by name), so a new cell takes the new drivers at once and no driver
 * given earlier changes cell.
 */
export class CellDirectory {
  constructor(private readonly db: StateDb) {}

  /** Registers `name` (nothing when it is known). */
  async register(name: string, now = new Date()): Promise<void> {
    await this.db.run('cell_register', { name, now: now.toISOString() });
  }

  async list(): Promise<CellInfo[]> {
    return (await this.db.all('cells_list')).map((r) => ({
      name: String(r['name']),
      registeredAt: String(r['registered_at']),
      accepting: Number(r['accepting']) === 1,
      drivers: Number(r['drivers']),
    }));
  }

  /** Whether any cell is registered: without one, the data folder is the only cell. */
  async inUse(): Promise<boolean> {
    return (await this.list()).length > 0;
  }

  async setAccepting(name: string, accepting: boolean): Promise<boolean> {
    return (await this.db.run('cell_accepting_set', { name, accepting: accepting ? 1 : 0 })) > 0;
  }

  /** A driver's cell, given one now if it has none; null when no cell is registered. */
  async cellOf(appId: string, userId: number): Promise<string | null> {
    const known = (await this.cellsOf(appId, [userId])).get(userId);
    if (known !== undefined) return known;
    if (!(await this.inUse())) return null;
    return (await this.assign(appId, [userId])).get(userId) ?? null;
  }

  /** The cells of the drivers that have one (none given here). */
  async cellsOf(appId: string, userIds: number[]): Promise<Map<number, string>> {
    return cellsIn(this.db, appId, userIds);
  }

  /**
   * The cell of each driver, giving the ones without a cell one by the rule (in one transaction,
   * so two processes give a driver the same cell). An empty map when no cell is registered.
   */
  assign(appId: string, userIds: number[], now = new Date()): Promise<Map<number, string>> {
    return this.db.transaction((tx) => assignIn(tx, appId, userIds, now));
  }

  /** Moves a driver's record of its cell; false when it was not in `from`. */
  async move(appId: string, userId: number, from: string, to: string, now = new Date()): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const moved = await tx.run('driver_cell_move', {
        app_id: appId,
        platform_user_id: userId,
        from,
        to,
        now: now.toISOString(),
      });
      if (moved === 0) return false;
      await tx.run('cell_drivers_add', { name: from, n: -1 });
      await tx.run('cell_drivers_add', { name: to, n: 1 });
      return true;
    });
  }
}

/** Ids looked up at once (a JSON array bound as one parameter). */
const LOOKUP = 5_000;

async function cellsIn(db: StateQueries, appId: string, userIds: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const ids = [...new Set(userIds)];
  for (let at = 0; at < ids.length; at += LOOKUP) {
    const rows = await db.all('driver_cells_of', { app_id: appId, ids: JSON.stringify(ids.slice(at, at + LOOKUP)) });
    for (const r of rows) out.set(Number(r['platform_user_id']), String(r['cell']));
  }
  return out;
}

/** Gives the drivers without a cell one, each in turn to the accepting cell with the fewest drivers. */
export async function assignIn(
  tx: StateQueries,
  appId: string,
  userIds: number[],
  now: Date,
): Promise<Map<number, string>> {
  const cells = (await tx.all('cells_list')).map((r) => ({
    name: String(r['name']),
    accepting: Number(r['accepting']) === 1,
    drivers: Number(r['drivers']),
  }));
  if (cells.length === 0) return new Map();
  const found = await cellsIn(tx, appId, userIds);
  const open = cells.filter((c) => c.accepting);
  // every cell closed to new drivers: they go to the least loaded of all, never nowhere
  const candidates = open.length > 0 ? open : cells;
  const given = new Map<string, number>();
  for (const userId of new Set(userIds)) {
    if (found.has(userId)) continue;
    const pick = candidates.reduce((a, b) =>
      b.drivers < a.drivers || (b.drivers === a.drivers && b.name < a.name) ? b : a,
    );
    await tx.run('driver_cell_insert', {
      app_id: appId,
      platform_user_id: userId,
      cell: pick.name,
      now: now.toISOString(),
    });
    pick.drivers++;
    given.set(pick.name, (given.get(pick.name) ?? 0) + 1);
    found.set(userId, pick.name);
  }
  for (const [name, n] of given) await tx.run('cell_drivers_add', { name, n });
  return found;
}
