-- Appends one kind of event to event_rows (event_rows.sql), in the order its query gives them.
-- The query goes in for events: one of trip_created.sql, trip_updated.sql, score_events.sql,
-- user_deleted.sql, each giving id, type, app_id, data.
-- writes: event_rows (temp)
-- params: $part INTEGER (the kind's place in the file: 1 trip.created ... 4 user.deleted), and those of the query
insert into event_rows select $part, id, type, app_id, data from ({{events}})
