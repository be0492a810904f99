import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, fsyncFile } from '../fsutil.js';
import { queryFile, quoteIdent, run, runFile, runScript, sqlText, sqlWith } from '../db/sql.js';
import { copyTo, dropTemps } from '../db/statements.js';
import {
  inTransaction,
  nextBatchId,
  setWarehouseVersion,
  warehouseVersion,
  type Warehouse,
} from '../warehouse/warehouse.js';
import { MANIFEST, PACKAGE_TABLES, sha256, type PackageManifest } from './move-package.js';

/** The raw-points files' COPY options, as src/load/points-parquet.ts has them (this room does not import src/load). */
const POINTS_PARQUET = 'format parquet, compression zstd, parquet_version v2';

/** A package imported (now, or by a run stopped before its arrival was recorded), waiting for its publish. */
export interface ImportedMove {
  manifest: PackageManifest;
  /** The warehouse version of the import (the publish that follows serves it). */
  version: number;
  /** Trips the import added (those the target held already stay as they are). */
  trips: number;
  /** The package's files in the landing area, removed once the arrival is recorded. */
  files: string[];
}

/**
 * The target's side of a move (docs/decisions.md, Cells), before the load lists its landing area:
 * every whole package (its manifest and each file it names, with its hash) of a driver moved into
 * this cell is imported in one transaction with a new warehouse version (src/cells/move_import.sql),
 * after the raw points of its trips are written beside the others, under their loaded files' names
 * (`f<key>_mv<id>.parquet`), so the publish writes their route files as for any loaded trip. A
 * package whose driver's account was deleted meanwhile brings nothing in (the deletion's purge
 * erased, or will erase, what this cell holds), but still counts as arrived so the source erases
 * its copy. A package a run imported already is not imported again.
 */
export async function importMoves(
  wh: Warehouse,
  landingDir: string,
  pointsDir: string,
  isDeleted: (appId: string, userId: number) => Promise<boolean>,
  now: Date,
  refused: (name: string, reason: string) => void,
): Promise<ImportedMove[]> {
  if (!existsSync(landingDir)) return [];
  const out: ImportedMove[] = [];
  const names = new Set(readdirSync(landingDir));
  for (const name of [...names].filter((n) => MANIFEST.test(n)).sort()) {
    let manifest: PackageManifest;
    try {
      manifest = JSON.parse(readFileSync(join(landingDir, name), 'utf8')) as PackageManifest;
    } catch (error) {
      removePackage([join(landingDir, name)]);
      refused(name, `not a package's manifest (${error instanceof Error ? error.message : String(error)})`);
      continue;
    }
    const files = PACKAGE_TABLES.map((t) => manifest.files[t].name);
    // a part still to come (the manifest is sent last, but taken in pages): a later run imports it
    if (!files.every((f) => names.has(f))) continue;
    const paths = [...files.map((f) => join(landingDir, f)), join(landingDir, name)];
    const broken = PACKAGE_TABLES.find(
      (t) => sha256(readFileSync(join(landingDir, manifest.files[t].name))) !== manifest.files[t].sha256,
    );
    // never a stuck load: the package goes, and the driver stays served from its source until
    // cells.js move, run again there, sends it again
    if (broken) {
      removePackage(paths);
      refused(name, `${manifest.files[broken].name} is not the file its manifest names`);
      continue;
    }
    const [done] = await queryFile(wh.conn, 'ops/cells/move_in_done', { move_id: manifest.moveId });
    if (done) {
      out.push({ manifest, version: Number(done['version']), trips: 0, files: paths });
      continue;
    }
    const deleted = await isDeleted(manifest.appId, manifest.userId);
    out.push({ ...(await importOne(wh, landingDir, pointsDir, manifest, deleted, now)), files: paths });
  }
  return out;
}

async function importOne(
  wh: Warehouse,
  landingDir: string,
  pointsDir: string,
  m: PackageManifest,
  deleted: boolean,
  now: Date,
): Promise<Omit<ImportedMove, 'files'>> {
  const conn = wh.conn;
  for (const table of PACKAGE_TABLES) {
    const file = join(landingDir, m.files[table].name);
    await runFile(conn, 'ops/cells/move_in_table', { file });
    await run(conn, sqlWith('ops/cells/move_in_rename', { name: quoteIdent(`move_in_${table}`) }));
  }
  try {
    if (!deleted) await writePoints(conn, pointsDir, m.moveId);
    const version = (await warehouseVersion(conn)) + 1;
    const batchId = await nextBatchId(conn);
    let trips = 0;
    await inTransaction(conn, async () => {
      if (!deleted) {
        await runScript(conn, 'ops/cells/move_import', {
          version,
          batch_id: batchId,
          app_id: m.appId,
          user_id: m.userId,
        });
        await run(conn, sqlWith('ops/cells/stats_daily_insert', { stats: sqlText('models/marts/stats_daily') }), {
          version,
        });
        const [n] = await queryFile(conn, 'ops/cells/move_new_trips_count');
        trips = Number(n?.['n'] ?? 0);
      }
      await runScript(conn, 'ops/cells/move_in_record', {
        move_id: m.moveId,
        app_id: m.appId,
        user_id: m.userId,
        from_cell: m.from,
        version,
        now: now.toISOString(),
        batch_id: batchId,
        report: JSON.stringify({ move: m.moveId, from: m.from, trips, deleted }),
      });
      await setWarehouseVersion(conn, version);
    });
    return { manifest: m, version, trips };
  } finally {
    await dropTemps(
      conn,
      PACKAGE_TABLES.map((table) => ({ name: `move_in_${table}`, kind: 'table' as const })),
    );
  }
}

/**
 * The package's raw points, one file per trip date and loaded file, named after that file (the
 * route files and the purge find a loaded file's points by that name): written before the import
 * commits, so a trip committed never lacks its points; a run stopped between leaves files whose
 * trips are not held, which readers join away and the next import writes again.
 */
async function writePoints(conn: Warehouse['conn'], pointsDir: string, moveId: string): Promise<void> {
  const parts = await queryFile(conn, 'ops/cells/move_in_point_parts');
  for (const part of parts) {
    const tripDate = String(part['trip_date']);
    const fileKey = String(part['file_key']);
    const dir = join(pointsDir, `trip_date=${tripDate}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `f${fileKey.slice(0, 16)}_mv${moveId}.parquet`);
    await runFile(conn, 'ops/cells/move_in_points', { trip_date: tripDate, file_key: fileKey });
    await copyTo(conn, { table: 'move_in_points_part' }, `${file}.tmp`, POINTS_PARQUET);
    fsyncFile(`${file}.tmp`);
    renameSync(`${file}.tmp`, file);
    fsyncDir(dir);
  }
}

/** Removes an arrived package's files from the landing area. */
export function removePackage(files: string[]): void {
  for (const f of files) rmSync(f, { force: true });
}
