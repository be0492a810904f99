import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import type { App } from '../apps/store.js';
import type { Progress } from '../progress.js';
import { openState, resolveDatabaseUrl } from '../state/open.js';
import { addDays, todayIn } from '../time.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { CellSettingError, currentCell } from '../cell.js';
import { sendPackage } from './move-package.js';
import { beginMove, markExported, moveIdOf, moveOfDriver, MoveRefusedError, type DriverMove } from './move-record.js';

export interface MoveOptions {
  dataDir: string;
  apps: App[];
  /** The driver's app; may be left out when the data folder has one app. */
  appId?: string;
  orgUserId: string;
  to: string;
  now?: Date;
  progress: Progress;
}

export interface MoveResult {
  appId: string;
  orgUserId: string;
  platformUserId: number;
  from: string;
  to: string;
  moveId: string;
  /** The package: its rows per table and its bytes. */
  rows: Record<string, number>;
  bytes: number;
  /** A move begun earlier whose package is sent again (the command run again after it stopped). */
  resumed: boolean;
}

/**
 * `cells.js move` (docs/operating.md, Cells), on the source cell's machine, which holds the
 * driver's rows: the driver's cell becomes the target in the shared store (its new records go
 * there from now on; src/cells/move-record.ts), then its rows are sent to the target as a package
 * through the shared intake (src/cells/move-package.ts). The target's next load imports it and
 * records its arrival; this cell's purge erases the driver after DRIVING_CELL_MOVE_GRACE. Run again
 * after a stop, it sends the package again.
 */
export async function moveDriver(options: MoveOptions): Promise<MoveResult> {
  const cell = currentCell();
  const url = resolveDatabaseUrl();
  if (!cell || !url)
    throw new CellSettingError(
      "cells.js move runs on the driver's cell's machine, with --cell SOURCE and DATABASE_URL",
    );
  if (options.to === cell) throw new MoveRefusedError(`--to ${options.to}: the driver's data is in that cell already`);
  const appId = options.appId ?? onlyApp(options.apps);
  if (!options.apps.some((a) => a.appId === appId)) throw new MoveRefusedError(`--app ${appId}: no such app`);
  const now = options.now ?? new Date();
  const state = await openState({ dataDir: options.dataDir });
  const [account] = await state.all('account_active', { app_id: appId, org_user_id: options.orgUserId });
  if (!account) throw new MoveRefusedError(`--org-user ${options.orgUserId}: no active account of app ${appId}`);
  const userId = Number(account['platform_user_id']);
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const wh = await openWarehouse(paths.warehouseFile, options.apps, { memoryLimit: settings.memoryLimit });
  try {
    const pending = await moveOfDriver(state, appId, userId);
    const resumed = pending !== null && pending.from === cell && pending.to === options.to;
    // a driver still on its way from another move: the cell it left must erase it first, or the
    // record of that move (what tells that cell to erase it) would be replaced
    if (pending !== null && !resumed)
      throw new MoveRefusedError(
        `the driver's move from ${pending.from} to ${pending.to} is not finished: run this once ${pending.from} has erased it (cells.js move, docs/operating.md)`,
      );
    let move: DriverMove;
    if (resumed) {
      move = { ...pending, moveId: moveIdOf(appId, userId, now.toISOString()) };
      options.progress(
        `cells: move: driver ${userId} was on its way to ${options.to} already: its package is sent again`,
      );
    } else {
      move = await beginMove(state, appId, userId, cell, options.to, now);
      options.progress(`cells: move: driver ${userId} of app ${appId} now belongs to cell ${options.to}`);
    }
    const sent = await sendPackage(
      wh,
      await (await import('../intake/upload-queue.js')).sharedUploadQueue(url),
      { moveId: move.moveId, appId, userId, orgUserId: options.orgUserId, from: cell, to: options.to },
      {
        pointsDir: paths.pointsDir,
        oldestPointsDate: addDays(todayIn('UTC', now), -settings.pointsRetentionDays),
        // counts are carried once, by the package that arrives first
        carriesCounts: !resumed || pending?.arrivedVersion === null,
        now,
      },
    );
    await markExported(state, move, move.moveId, sent.manifest.version);
    const rows = Object.fromEntries(Object.entries(sent.manifest.files).map(([t, f]) => [t, f.rows]));
    return {
      appId,
      orgUserId: options.orgUserId,
      platformUserId: userId,
      from: cell,
      to: options.to,
      moveId: move.moveId,
      rows,
      bytes: sent.bytes,
      resumed,
    };
  } finally {
    wh.close();
  }
}

function onlyApp(apps: App[]): string {
  if (apps.length !== 1)
    throw new MoveRefusedError(`--app: the data folder has ${apps.length} apps: say which one the driver is of`);
  return (apps[0] as App).appId;
}
