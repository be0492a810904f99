import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { DatabaseBusyError, openDatabase } from '../db/open.js';
import { queryFile, runFile, type Row } from '../db/sql.js';
import { InputError } from '../errors.js';
import { isDate } from '../time.js';
import { mergedPlace } from '../load/archive-members.js';
import type { DuckDBConnection } from '@duckdb/node-api';

export type QuarantineRequest =
  | {
      op: 'list';
      date: string | null;
      reason: string | null;
      kind: 'record' | 'event' | null;
      appId: string | null;
      limit: number;
    }
  | { op: 'show'; id: string };

export interface QuarantinedItem {
  id: string;
  quarantinedAt: string;
  kind: 'record' | 'event';
  reason: string;
  sourceFile: string;
  lineNo: number;
  appId: string | null;
  tripId: string | null;
  /** What the reason code alone does not say (time_out_of_range: the allowed range and the load's clock), or null (`show` only). */
  detail?: string | null;
  /** The line as delivered (a record), or the event as JSON; null for a Parquet row. */
  raw?: string | null;
  /** Where the file is now, when the load moved it from the landing area to its archive (`show` only). */
  nowAt?: string | null;
}

export interface QuarantineList {
  op: 'list';
  /** Every quarantined item the filters match (the list shows at most `limit`). */
  matching: number;
  byReason: { kind: string; reason: string; count: number }[];
  items: QuarantinedItem[];
  /** False when nothing was ever loaded into this data folder (no warehouse yet). */
  warehouse: boolean;
}

export interface QuarantineShow {
  op: 'show';
  item: QuarantinedItem;
}

/**
 * `jobs/quarantine.js`: the records and events a load set aside, read from the warehouse table
 * `quarantine` (sql/ops/load/merge_file.sql writes it). The warehouse is opened read-only and never
 * waited for: while a load or score holds it, this says so and exits 3.
 */
export async function runQuarantine(
  dataDir: string,
  request: QuarantineRequest,
): Promise<QuarantineList | QuarantineShow> {
  if (request.op === 'list') checkList(request);
  const { warehouseFile, landingDir } = pathsFor(dataDir);
  if (!existsSync(warehouseFile)) {
    if (request.op === 'show')
      throw new InputError(`no quarantined record ${request.id}: nothing has been loaded into ${dataDir} yet`);
    return { op: 'list', matching: 0, byReason: [], items: [], warehouse: false };
  }
  const db = await openReadOnly(warehouseFile);
  try {
    await runFile(db.connection, 'ops/quarantine/numbered');
    if (request.op === 'show') {
      const [row] = await queryFile(db.connection, 'ops/quarantine/show', { id: request.id });
      if (!row)
        throw new InputError(
          `no quarantined record ${request.id} (ids as quarantine.js list shows them, e.g. 12-345 or 12-345-e1)`,
        );
      const found = item(row);
      return {
        op: 'show',
        item: {
          ...found,
          detail: row['detail'] === null || row['detail'] === undefined ? null : String(row['detail']),
          raw: row['raw'] === null ? null : String(row['raw']),
          nowAt: archivedCopy(landingDir, found) ?? (await mergedCopy(db.connection, landingDir, found)),
        },
      };
    }
    const filters = { date: request.date, reason: request.reason, kind: request.kind, app: request.appId };
    const rows = await queryFile(db.connection, 'ops/quarantine/list', { ...filters, limit: request.limit });
    const reasons = await queryFile(db.connection, 'ops/quarantine/reasons', filters);
    return {
      op: 'list',
      matching: reasons.reduce((a, r) => a + Number(r['count']), 0),
      byReason: reasons.map((r) => ({
        kind: String(r['kind']),
        reason: String(r['reason']),
        count: Number(r['count']),
      })),
      items: rows.map(item),
      warehouse: true,
    };
  } finally {
    db.close();
  }
}

async function openReadOnly(file: string) {
  try {
    // waits its turn like every job: the continuous load lets a waiting process in between batches
    return await openDatabase(file, { readOnly: true, lockWaitMs: jobSettings().warehouseLockWaitMs });
  } catch (error) {
    // DuckDB allows one writer or many readers: a running load, score or export holds the file
    if (error instanceof DatabaseBusyError) {
      throw new DatabaseBusyError(
        file,
        error.detail,
        'the warehouse is busy (a load, score or export is running): run quarantine.js again when it has finished (or give it longer: DRIVING_WAREHOUSE_LOCK_WAIT_MS)',
      );
    }
    throw error;
  }
}

/** A file loaded from the landing area moves to `landing/loaded/<UTC day of the load>/` (src/load/landing.ts). */
function archivedCopy(landingDir: string, i: QuarantinedItem): string | null {
  if (existsSync(i.sourceFile) || dirname(i.sourceFile) !== landingDir) return null;
  const archived = join(landingDir, 'loaded', i.quarantinedAt.slice(0, 10), basename(i.sourceFile));
  return existsSync(archived) ? archived : null;
}

/** The same file when a merge of the day's archive took it: the merged file and its member (src/load/archive-members.ts). */
async function mergedCopy(conn: DuckDBConnection, landingDir: string, i: QuarantinedItem): Promise<string | null> {
  if (existsSync(i.sourceFile) || dirname(i.sourceFile) !== landingDir) return null;
  return mergedPlace(conn, landingDir, i.quarantinedAt.slice(0, 10), basename(i.sourceFile));
}

function checkList(request: Extract<QuarantineRequest, { op: 'list' }>): void {
  if (request.date !== null && !isDate(request.date))
    throw new InputError(`--date must be a date YYYY-MM-DD, got '${request.date}'`);
  if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > 100_000)
    throw new InputError('--limit must be a whole number from 1 to 100000');
}

function item(row: Row): QuarantinedItem {
  return {
    id: String(row['id']),
    quarantinedAt: new Date(String(row['quarantined_at'])).toISOString(),
    kind: row['kind'] === 'event' ? 'event' : 'record',
    reason: String(row['reason']),
    sourceFile: String(row['source_file']),
    lineNo: Number(row['line_no']),
    appId: row['app_id'] === null ? null : String(row['app_id']),
    tripId: row['trip_id'] === null ? null : String(row['trip_id']),
  };
}
