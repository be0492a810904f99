import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { detach, inDatabase } from '../db/statements.js';
import { readMeta } from '../warehouse/meta.js';
import { firstLine } from '../errors.js';
import { compactDatabase } from '../db/compact.js';
import { attachWhenReleased } from './retire.js';
import { slotFile, type Slot } from './manifest.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { applyToSlot, purgedAfter } from './apply-to-slot.js';

/** How long a publish waits for the API to let go of the slot it just retired, to bring it up to date too. */
export const SETTLE_WAIT_MS = 10_000;

export interface Settled {
  slot: Slot;
  /** The slot's version before (it is now at `version`), or null when it was left as it was. */
  fromVersion: number | null;
  version: number;
  rowsApplied: number;
  seconds: number;
  /** Why the slot was left behind (the next publish that writes it catches it up, as it always could). */
  skipped?: string;
}

/** What the caller brings: the publish's own steps, so a settled slot gets exactly what a publish writes. */
export interface SettleSteps {
  whId: string;
  version: number;
  /** Whether the slot still holds the bytes of users purged since its version (no scrub reached it). */
  compactPurged: boolean;
  apply: (conn: DuckDBConnection, since: number, version: number) => Promise<number>;
  purgedAfter: (conn: DuckDBConnection, since: number) => Promise<boolean>;
}

/**
 * Brings the slot that is not served (`slot`, the one a publish just retired) up to the served
 * version, once no API holds it, with the same statements, checks and checkpoint a publish uses.
 * The load calls it after its switch: it has just copied its trips into one slot and pays the
 * other copy too, so the score run that follows writes only the scores it changed into a slot
 * that holds everything else already, instead of catching up the day's trips and events first.
 *
 * Nothing here is served: the manifest names the other slot, and a run killed here leaves this
 * slot at its old version (one transaction), which the next publish catches up as before. A slot
 * that is missing, of another warehouse, corrupt, or still held after `waitMs` is left as it is
 * (`skipped`): the next publish that writes it deletes and rebuilds a corrupt one, as it would have.
 */
export async function settleSlot(
  conn: DuckDBConnection,
  publishedDir: string,
  slot: Slot,
  waitMs: number,
  steps: SettleSteps,
): Promise<Settled> {
  const started = performance.now();
  const file = slotFile(publishedDir, slot);
  const left = (skipped: string): Settled => ({
    slot,
    fromVersion: null,
    version: steps.version,
    rowsApplied: 0,
    seconds: (performance.now() - started) / 1000,
    skipped,
  });
  if (!existsSync(file)) return left('no such file');
  try {
    if (!(await attachWhenReleased(conn, file, waitMs, 'slot')))
      return left(`still held by a reader after ${Math.round(waitMs / 1000)} s`);
  } catch (error) {
    return left(`${basename(file)}: ${firstLine(error)}`);
  }
  try {
    const meta = await inDatabase(conn, 'slot', () => readMeta(conn));
    const since = Number(meta.get('version') ?? Number.NaN);
    if (meta.get('warehouse_id') !== steps.whId || !(since >= 0 && since <= steps.version)) {
      return left('of another warehouse or version: rebuilt by the next publish that writes it');
    }
    if (since === steps.version)
      return {
        slot,
        fromVersion: since,
        version: since,
        rowsApplied: 0,
        seconds: (performance.now() - started) / 1000,
      };
    const purged = steps.compactPurged && (await steps.purgedAfter(conn, since));
    const rowsApplied = await steps.apply(conn, since, steps.version);
    // as in a publish: deleted rows keep their bytes until the file is written anew (src/db/compact.ts)
    if (purged) await compactDatabase(conn, 'slot', file);
    return {
      slot,
      fromVersion: since,
      version: steps.version,
      rowsApplied,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (error) {
    // corrupt blocks, a full disk: this slot is not served; the next publish into it deals with it
    return left(`${basename(file)}: ${firstLine(error)}`);
  } finally {
    await detach(conn, 'slot').catch(() => undefined);
  }
}

/** Brings slot `slot` (not served) up to `version` once the API lets go of it; never fails the publish. */
export async function catchUp(
  wh: Warehouse,
  options: { publishedDir: string; lockWaitMs: number; progress?: (message: string) => void },
  slot: Slot,
  s: { whId: string; version: number; compactPurged: boolean },
): Promise<Settled> {
  options.progress?.(`publish: catching up slot ${slot} to version ${s.version}`);
  const settled = await settleSlot(wh.conn, options.publishedDir, slot, Math.min(options.lockWaitMs, SETTLE_WAIT_MS), {
    ...s,
    apply: applyToSlot,
    purgedAfter,
  });
  if (settled.skipped)
    options.progress?.(`publish: slot ${slot} left behind for the next publish (${settled.skipped})`);
  return settled;
}

/** The publish's detail line's words on the slot caught up (none when it was left as it was). */
export const settledDetail = (s: Settled | undefined): string =>
  !s || s.skipped || s.fromVersion === s.version
    ? ''
    : `; slot ${s.slot} caught up too (${s.rowsApplied} rows in ${s.seconds.toFixed(2)} s)`;
