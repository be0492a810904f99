import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listValue } from '../db/duckdb.js';
import { queryFile, runFile, runScript } from '../db/sql.js';
import { copyTo, dropTemps } from '../db/statements.js';
import { UNMERGED_POINTS, mergedPointsOfKeys } from '../warehouse/merged-points.js';
import { warehouseVersion, type Warehouse } from '../warehouse/warehouse.js';
import type { Forwarder } from './split.js';

/** The tables a package carries, each one Parquet file (sql/ops/cells/move_export.sql). */
export const PACKAGE_TABLES = [
  'trips',
  'trip_events',
  'stats_daily',
  'safety_scores',
  'announced_trips',
  'announced_scores',
  'points',
] as const;
export type PackageTable = (typeof PACKAGE_TABLES)[number];

/**
 * A package's files in the landing area, `move-<id>.<table>.cellmove` and the manifest, named
 * so that neither the listing of partner files nor the split ever takes them for one.
 */
export const packageFile = (moveId: string, part: PackageTable | 'manifest'): string =>
  `move-${moveId}.${part}.cellmove`;
export const MANIFEST = /^move-([0-9a-f]{16})\.manifest\.cellmove$/;

export interface PackageManifest {
  format: 1;
  moveId: string;
  appId: string;
  userId: number;
  orgUserId: string;
  from: string;
  to: string;
  /** The source warehouse's version the rows are of. */
  version: number;
  /** Whether the source's posted score counts still count the driver (the first package of a move). */
  carriesCounts: boolean;
  files: Record<PackageTable, { name: string; sha256: string; rows: number }>;
}

export interface SentPackage {
  manifest: PackageManifest;
  bytes: number;
}

/**
 * Writes a moved driver's rows of the source warehouse as a package and commits it to the
 * shared intake for the target's load (docs/decisions.md, Cells): one Parquet file per table
 * keyed by app and user, the raw points of its trips still kept (from the points files of the
 * trips' loaded files, merged ones included) and, last, the manifest naming each file with its
 * hash, so the target imports a package only when it is whole. The caller holds the warehouse, so
 * the rows are those of one version.
 */
export async function sendPackage(
  wh: Warehouse,
  forward: Forwarder,
  move: { moveId: string; appId: string; userId: number; orgUserId: string; from: string; to: string },
  options: { pointsDir: string; oldestPointsDate: string; carriesCounts: boolean; now: Date },
): Promise<SentPackage> {
  const conn = wh.conn;
  const version = await warehouseVersion(conn);
  await runScript(conn, 'ops/cells/move_export', { app_id: move.appId, user_id: move.userId });
  for (const part of await queryFile(conn, 'ops/cells/move_point_parts', { oldest: options.oldestPointsDate })) {
    const tripDate = String(part['trip_date']);
    const fileKey = String(part['file_key']);
    const dir = join(options.pointsDir, `trip_date=${tripDate}`);
    const own = existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => n.endsWith('.parquet') && UNMERGED_POINTS.exec(n)?.[1] === fileKey.slice(0, 16))
          .map((n) => join(dir, n))
      : [];
    const merged = await mergedPointsOfKeys(conn, dir, tripDate, [fileKey]);
    if (own.length + merged.length === 0) continue;
    await runFile(conn, merged.length > 0 ? 'ops/cells/move_points_merged' : 'ops/cells/move_points_unmerged', {
      files: listValue([...own, ...merged]),
      app_id: move.appId,
      trip_ids: listValue((part['trip_ids'] as unknown[]).map(String)),
      trip_date: tripDate,
      file_key: fileKey,
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'dds-move-'));
  try {
    const files = {} as PackageManifest['files'];
    const contents: Array<[string, Buffer]> = [];
    for (const table of PACKAGE_TABLES) {
      const file = join(dir, `${table}.parquet`);
      await copyTo(conn, { table: `move_${table}` }, file, 'format parquet, compression zstd');
      const [count] = await queryFile(conn, 'ops/cells/move_rows', { file });
      const bytes = readFileSync(file);
      const name = packageFile(move.moveId, table);
      files[table] = { name, sha256: sha256(bytes), rows: Number(count?.['n'] ?? 0) };
      contents.push([name, bytes]);
    }
    const manifest: PackageManifest = {
      format: 1,
      ...move,
      version,
      carriesCounts: options.carriesCounts,
      files,
    };
    let bytes = 0;
    for (const [name, content] of contents) {
      await forward.put(name, move.appId, options.now, content, move.to);
      bytes += content.length;
    }
    // last: a target that finds the manifest finds every file it names
    await forward.put(
      packageFile(move.moveId, 'manifest'),
      move.appId,
      options.now,
      Buffer.from(JSON.stringify(manifest)),
      move.to,
    );
    return { manifest, bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dropTemps(
      conn,
      PACKAGE_TABLES.map((table) => ({ name: `move_${table}`, kind: 'table' as const })),
    );
  }
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
