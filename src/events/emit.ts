import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { query, run, runScript, sqlText } from '../db/sql.js';
import { writeFileAtomic } from '../fsutil.js';
import { ENVELOPE_VERSION } from '../webhooks/envelope.js';

export interface EmitResult {
  tripCreated: number;
  /** Re-sent or re-derived trips whose served fields changed (sql/events/trip_fingerprints.sql). */
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
export async function emitEvents(wh: Warehouse, eventsDir: string, publishedVersion: number, now: Date): Promise<EmitResult> {
  const conn = wh.conn;
  const since = Number((await query(conn, "select coalesce(max(value::bigint), 0) as v from meta where key = 'score_events_version'"))[0]?.['v'] ?? 0);
  const [announced] = await query(conn, 'select coalesce(max(announced_version), 0) as v from announced_trips');
  const tripsSince = Number(announced?.['v'] ?? 0);
  const trips = await query(conn, sqlText('events/trip_created'), { since: tripsSince, version: publishedVersion });
  // held for the record below: every trip written since, with what it serves as a fingerprint
  await run(conn, `create or replace temp table trip_fingerprints as ${sqlText('events/trip_fingerprints')}`, { since: tripsSince, version: publishedVersion });
  const updated = await query(conn, sqlText('events/trip_updated'));
  const usersSince = Number((await query(conn, "select coalesce(max(value::bigint), 0) as v from meta where key = 'user_events_version'"))[0]?.['v'] ?? 0);
  const deleted = await query(conn, sqlText('events/user_deleted'), { since: usersSince, version: publishedVersion });
  // held for the record below: only users whose values changed since their last announcement
  await run(conn, `create or replace temp table score_events as ${sqlText('events/safety_score_updated')}`, { since, version: publishedVersion });
  const scores = await query(conn, 'select id, type, app_id, data from score_events order by app_id, user_id, evaluation_date');
  const events = [...trips, ...updated, ...scores, ...deleted];
  let file: string | null = null;
  if (events.length > 0) {
    const createdAt = now.toISOString();
    const lines = events.map((e) =>
      JSON.stringify({ id: e['id'], type: e['type'], version: ENVELOPE_VERSION, createdAt, appId: e['app_id'], data: JSON.parse(String(e['data'])) }),
    );
    // named by the published version: a re-run after a crash rewrites the same file with the same
    // events and ids (if the deliverer already took it, they are delivered again: at-least-once)
    file = join(eventsDir, `v${String(publishedVersion).padStart(12, '0')}.ndjson`);
    writeFileAtomic(file, `${lines.join('\n')}\n`, 0o644);
  }
  await inTransaction(conn, async () => {
    await runScript(conn, 'events/mark_trips_announced', { version: publishedVersion });
    await run(conn, "insert or replace into meta values ('user_events_version', $v::varchar)", { v: publishedVersion });
    await runScript(conn, 'events/mark_scores_announced', { version: publishedVersion });
    await markScoresAnnounced(conn, publishedVersion);
  });
  await run(conn, 'drop table score_events');
  await run(conn, 'drop table trip_fingerprints');
  return { tripCreated: trips.length, tripUpdated: updated.length, safetyScoreUpdated: scores.length, userDeleted: deleted.length, file };
}

/** Scores written up to `version` count as announced: later runs announce only newer ones. */
export async function markScoresAnnounced(conn: DuckDBConnection, version: number): Promise<void> {
  await run(conn, "insert or replace into meta values ('score_events_version', $v::varchar)", { v: version });
}
