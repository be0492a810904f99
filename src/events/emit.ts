import type { DuckDBConnection } from '@duckdb/node-api';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { materialize, query, queryFile, run, runFile, runScript, sqlText, sqlWith, type Params } from '../db/sql.js';
import { copyTo, dropTemp } from '../db/statements.js';
import { setMeta } from '../warehouse/meta.js';
import { fsyncFile, moveIntoPlace, temporaryBeside } from '../fsutil.js';
import { ENVELOPE_VERSION } from '../webhooks/envelope.js';

export interface EmitResult {
  tripCreated: number;
  /** Re-sent or re-derived trips whose served fields changed (sql/ops/events/trip_fingerprints.sql). */
  tripUpdated: number;
  safetyScoreUpdated: number;
  /** Accounts purged since the last run. */
  userDeleted: number;
  file: string | null;
}

/**
 * Writes the webhook events that a publish made true (docs/decisions.md, Webhooks (delivery)) to one NDJSON file in
 * events/pending/, for the deliverer. Called only after a publish succeeded, so no event announces
 * data the API does not serve. The file is written (fsync, rename) BEFORE the warehouse records
 * what it announced: a crash in between repeats the same events with the same ids (at-least-once).
 */
export async function emitEvents(
  wh: Warehouse,
  eventsDir: string,
  publishedVersion: number,
  now: Date,
): Promise<EmitResult> {
  const conn = wh.conn;
  // what each kind announced last, and which kinds have anything new: a kind with nothing is
  // skipped, statements and all (a score run writes no trip and purges no one)
  const [pending = {}] = await query(conn, sqlText('ops/events/pending_kinds'), { version: publishedVersion });
  const since = Number(pending['scores_since'] ?? 0);
  const tripsSince = Number(pending['trips_since'] ?? 0);
  const usersSince = Number(pending['users_since'] ?? 0);
  await runFile(conn, 'ops/events/event_rows');
  if (pending['trips'] === true) {
    await insertRows(conn, 1, sqlText('ops/events/trip_created'), { since: tripsSince, version: publishedVersion });
    // held for the record below: every trip written since, with what it serves as a fingerprint
    await materialize(conn, 'ops/events/trip_fingerprints', { since: tripsSince, version: publishedVersion });
    await insertRows(conn, 2, sqlText('ops/events/trip_updated'));
  }
  if (pending['scores'] === true) {
    // held for the record below: only users whose values changed since their last announcement
    await materialize(conn, 'ops/events/safety_score_updated', { since, version: publishedVersion }, 'score_events');
    // score_events holds them in the order its statement sorted them (app, user, date), which a
    // scan gives back as the file's lines are (DuckDB keeps insertion order): not sorted twice
    await insertRows(conn, 3, sqlText('ops/events/score_events'));
  }
  if (pending['users'] === true)
    await insertRows(conn, 4, sqlText('ops/events/user_deleted'), { since: usersSince, version: publishedVersion });
  const counts = new Map(
    (await queryFile(conn, 'ops/events/event_counts')).map((r) => [Number(r['part']), Number(r['n'])]),
  );
  const count = (part: number): number => counts.get(part) ?? 0;
  let file: string | null = null;
  if (counts.size > 0) {
    // named by the published version: a re-run after a crash rewrites the same file with the same
    // events and ids (if the deliverer already took it, they are delivered again: at-least-once)
    file = join(eventsDir, `v${String(publishedVersion).padStart(12, '0')}.ndjson`);
    await writeLines(conn, file, { envelope: ENVELOPE_VERSION, created_at: now.toISOString() });
  }
  await inTransaction(conn, async () => {
    if (pending['trips'] === true)
      await runScript(conn, 'ops/events/mark_trips_announced', { version: publishedVersion });
    await setMeta(conn, 'user_events_version', publishedVersion);
    if (pending['scores'] === true)
      await runScript(conn, 'ops/events/mark_scores_announced', { version: publishedVersion });
    await markScoresAnnounced(conn, publishedVersion);
  });
  await dropTemp(conn, 'score_events');
  await dropTemp(conn, 'trip_fingerprints');
  await dropTemp(conn, 'event_rows');
  return { tripCreated: count(1), tripUpdated: count(2), safetyScoreUpdated: count(3), userDeleted: count(4), file };
}

/** Appends one kind of event to event_rows, in the order its statement gives them. */
async function insertRows(conn: DuckDBConnection, part: number, source: string, params?: Params): Promise<void> {
  await run(conn, sqlWith('ops/events/event_rows_insert', { events: source }), { ...params, part });
}

/**
 * DuckDB writes the lines (sql/ops/events/pending_lines.sql) to a temporary file beside `file`, each
 * ending in a newline: a CSV of one column, unquoted, with a delimiter no JSON text holds (control
 * characters are escaped in JSON), is the lines as they are. Then, as writeFileAtomic: fsync, rename.
 */
async function writeLines(conn: DuckDBConnection, file: string, params: Params): Promise<void> {
  const tmp = temporaryBeside(file);
  mkdirSync(dirname(file), { recursive: true });
  try {
    await copyTo(
      conn,
      { query: sqlText('ops/events/pending_lines') },
      tmp,
      "format csv, header false, quote '', escape '', delimiter '\x01'",
      params,
    );
    // as writeFileAtomic's open: 0644 through the process umask (a job's 077 leaves 0600)
    chmodSync(tmp, 0o644 & ~process.umask());
    fsyncFile(tmp);
    moveIntoPlace(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/** Scores written up to `version` count as announced: later runs announce only newer ones. */
export async function markScoresAnnounced(conn: DuckDBConnection, version: number): Promise<void> {
  await setMeta(conn, 'score_events_version', version);
}
