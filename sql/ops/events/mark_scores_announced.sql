-- Records the values just announced (the temp table score_events, made from
-- ops/events/safety_score_updated.sql), so that a re-run of the same dates with the same values
-- announces nothing.
-- reads: score_events; writes: announced_scores
-- params: $version BIGINT (the published version the events were written for)
delete from announced_scores as a using score_events as e
where a.app_id = e.app_id and a.user_id = e.user_id and a.evaluation_date = e.evaluation_date;

insert into announced_scores
select app_id, user_id, evaluation_date, fingerprint, generation, $version
from score_events;
