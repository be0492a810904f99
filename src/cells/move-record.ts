import { createHash } from 'node:crypto';
import type { StateDb, StateQueries, StateRow } from '../state/db.js';
import { InputError } from '../errors.js';

/** A driver in transit between two cells (sql/ops/state/schema.sql, driver_moves). */
export interface DriverMove {
  appId: string;
  platformUserId: number;
  from: string;
  to: string;
  /** Names the package the source sent last (its file names carry it). */
  moveId: string;
  movedAt: string;
  /** The source warehouse's version the package holds the rows of (null: not sent yet). */
  exportedVersion: number | null;
  /** The target's published version that serves the driver (null: not arrived yet). */
  arrivedVersion: number | null;
  arrivedAt: string | null;
}

/** A move asked for that cannot be made (no such driver in the source, an unknown cell): exit 2. */
export class MoveRefusedError extends InputError {}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function moveOf(r: StateRow): DriverMove {
  return {
    appId: String(r['app_id']),
    platformUserId: Number(r['platform_user_id']),
    from: String(r['from_cell']),
    to: String(r['to_cell']),
    moveId: String(r['move_id']),
    movedAt: String(r['moved_at']),
    exportedVersion: num(r['exported_version']),
    arrivedVersion: num(r['arrived_version']),
    arrivedAt: r['arrived_at'] === null || r['arrived_at'] === undefined ? null : String(r['arrived_at']),
  };
}

/** A package's id: the driver and the moment it was written, so a package sent again is a new one. */
export function moveIdOf(appId: string, userId: number, at: string): string {
  return createHash('sha256').update(`${appId}\u0000${userId}\u0000${at}`).digest('hex').slice(0, 16);
}

export async function moveOfDriver(db: StateQueries, appId: string, userId: number): Promise<DriverMove | null> {
  const [row] = await db.all('driver_move_of', { app_id: appId, platform_user_id: userId });
  return row ? moveOf(row) : null;
}

/**
 * Step one of a move (docs/decisions.md, Cells): in one transaction the driver's cell becomes
 * `to` (from then on its uploads and partner records go there) and the move is recorded, so the
 * API keeps answering it from `from` until the target serves it.
 */
export async function beginMove(
  db: StateDb,
  appId: string,
  userId: number,
  from: string,
  to: string,
  now: Date,
): Promise<DriverMove> {
  return db.transaction(async (tx) => {
    const cells = new Set((await tx.all('cells_list')).map((r) => String(r['name'])));
    if (!cells.has(to)) throw new MoveRefusedError(`--to ${to}: no such cell (cells.js list names them)`);
    const movedAt = now.toISOString();
    const changed = await tx.run('driver_cell_move', {
      app_id: appId,
      platform_user_id: userId,
      from,
      to,
      now: movedAt,
    });
    if (changed === 0)
      throw new MoveRefusedError(`the driver is not in cell ${from}: run the move on its cell's machine`);
    await tx.run('cell_drivers_add', { name: from, n: -1 });
    await tx.run('cell_drivers_add', { name: to, n: 1 });
    const moveId = moveIdOf(appId, userId, movedAt);
    await tx.run('driver_move_start', {
      app_id: appId,
      platform_user_id: userId,
      from_cell: from,
      to_cell: to,
      move_id: moveId,
      now: movedAt,
    });
    return {
      appId,
      platformUserId: userId,
      from,
      to,
      moveId,
      movedAt,
      exportedVersion: null,
      arrivedVersion: null,
      arrivedAt: null,
    };
  });
}

/** The package `moveId` is in the shared intake for the target, holding the source's rows up to `version`. */
export async function markExported(db: StateQueries, move: DriverMove, moveId: string, version: number): Promise<void> {
  await db.run('driver_move_exported', {
    app_id: move.appId,
    platform_user_id: move.platformUserId,
    from_cell: move.from,
    move_id: moveId,
    exported_version: version,
  });
}

/** The target imported package `moveId` and publishes it as `version`: the API may answer the driver from the target once it serves that. */
export async function markArrived(
  db: StateQueries,
  p: { appId: string; platformUserId: number; to: string; moveId: string },
  version: number,
  now: Date,
): Promise<boolean> {
  const n = await db.run('driver_move_arrived', {
    app_id: p.appId,
    platform_user_id: p.platformUserId,
    to_cell: p.to,
    move_id: p.moveId,
    arrived_version: version,
    now: now.toISOString(),
  });
  return n > 0;
}

/** The drivers moved away from `cell` that it may erase now (arrived `graceMs` ago, or deleted since). */
export async function leavingDrivers(
  db: StateQueries,
  cell: string,
  now: Date,
  graceMs: number,
): Promise<Array<DriverMove & { orgUserId: string; deleted: boolean }>> {
  const rows = await db.all('driver_moves_leaving', {
    cell,
    arrived_before: new Date(now.getTime() - graceMs).toISOString(),
  });
  return rows.map((r) => ({
    ...moveOf(r),
    orgUserId: String(r['org_user_id'] ?? ''),
    deleted: Number(r['deleted']) === 1,
  }));
}

/** The source erased the driver for package `moveId`: the move is over. */
export async function finishMove(db: StateQueries, move: DriverMove): Promise<void> {
  await db.run('driver_move_done', {
    app_id: move.appId,
    platform_user_id: move.platformUserId,
    from_cell: move.from,
    move_id: move.moveId,
  });
}
