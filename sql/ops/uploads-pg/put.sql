-- One accepted upload, and a wake-up for the job machine's load (delivered at commit).
-- params: $name TEXT, $app TEXT, $accepted_at TIMESTAMPTZ, $content BYTEA
with put as (
    insert into uploads.waiting (name, app_id, accepted_at, content)
    values ($name, $app, $accepted_at, $content)
    returning seq
)
select seq, pg_notify('driving_uploads', '') as notified from put;
