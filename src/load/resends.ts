import { basename } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile, runScript } from '../db/sql.js';
import { appendRawLines } from './raw-lines.js';
import type { LineIndex } from './scan-file.js';
import type { StagePath } from './stage-file.js';
import { isSdkUploadFile } from './uploads.js';

/**
 * For an SDK upload file, once its trips are staged: a record of a trip the account already has
 * (stored from another file, or sent earlier in this one) is accepted without effect when equal to
 * it, and rejected as `trip_immutable` otherwise (docs/decisions.md, Trip records (load), SDK re-sends, sql/ops/load/resends.sql).
 * Partner files may replace trips: nothing is done for them. The rejected lines' text joins
 * `raw_lines` for the quarantine.
 */
export async function settleResends(
  conn: DuckDBConnection,
  path: string,
  key: string,
  lines: LineIndex | undefined,
  how: StagePath,
): Promise<void> {
  if (!isSdkUploadFile(basename(path))) return;
  // most uploads send new trips once: then there is nothing to compare (and the comparison's
  // statements are a good part of a small batch's cost)
  const [candidates] = await queryFile(conn, 'ops/load/resend_candidates');
  if (candidates?.['any'] !== true) return;
  await runScript(conn, 'ops/load/resends', { file_key: key, sdk_upload: true });
  if (how !== 'typed' || !lines) return;
  // the typed path read only the lines rejected at staging; a line-by-line stage has them all
  const rows = await queryFile(conn, 'ops/load/immutable_lines');
  await appendRawLines(
    conn,
    path,
    lines,
    rows.map((r) => Number(r['line_no'])),
  );
}
