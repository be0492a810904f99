-- Every row of the users purged since $since goes from the slot (with purges).
-- params: none (reads purged, sql/ops/publish/apply/scope.sql)

delete from slot.trips as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.trip_events as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.stats_daily as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.safety_scores as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
