-- A package imported: recorded by its id (imported once), with a batch of its own in the ledger of
-- batches (kind 'move', so the trips' batch_id names where they came from)
-- params: $move_id, $app_id, $user_id, $from_cell, $version, $now, $batch_id, $report (JSON)
insert into cell_moves_in values ($move_id, $app_id, $user_id, $from_cell, $version, $now::timestamptz);
insert into batches values ($batch_id, 'move', $from_cell, $version, $now::timestamptz, now(), $report::json);
