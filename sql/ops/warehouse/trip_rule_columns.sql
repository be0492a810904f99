-- Brings a warehouse written before the overlap and immutability rules (docs/decisions.md, Trip records (load), overlapping trips and
-- 6) to the current trip columns:
-- - arrival_batch_id, arrival_line: where the load first accepted the trip (its batch, then its
--   line); a replaced trip keeps them, so "arrived earlier" (overlapping_trip) does not move when a
--   trip is sent again. A trip stored before is taken to have arrived with its stored copy.
-- - content_hash: the digest of the record's points and events (int_trip_content.sql). NULL for a
--   trip stored before: an SDK re-send of it cannot be shown identical and is refused
--   (trip_immutable) until `load.js --rederive` gives it one.
alter table trips add column if not exists arrival_batch_id bigint;
alter table trips add column if not exists arrival_line bigint;
alter table trips add column if not exists content_hash varchar;
update trips set arrival_batch_id = batch_id, arrival_line = source_line where arrival_batch_id is null;

-- the secret the content digests start from (int_trip_content.sql): random per warehouse, never published
insert into meta select 'content_salt', gen_random_uuid()::varchar on conflict do nothing;
